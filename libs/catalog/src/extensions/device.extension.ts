/**
 * The device extension: the tools an agent uses to act on a phone. Argument names match what the device executor
 * (and the simulated phone in @ormuz/device-sdk) reads.
 */
import type { JsonSchema } from '@ormuz/contracts';
import type { ExtensionManifest } from '../manifest.js';
import type { ParameterDefinition } from '../tool-definition.js';

const ref = (what: string): ParameterDefinition => ({
  schema: { type: 'string', minLength: 1, maxLength: 64, examples: ['e3'] },
  description: `Element ref from the latest device.screen_observe; ${what}`,
  controller: 'model',
  optional: true,
});

const continuation = (from: string): ParameterDefinition => ({
  schema: { type: 'string', minLength: 1, maxLength: 4096 },
  description: `Continuation handle from the previous ${from} result, passed back unchanged; leave it out for the first page`,
  controller: 'model',
  optional: true,
});

/**
 * Screen actions name the app they expect in front and, when they target an element, its visible text: both come
 * from the latest device.screen_observe. The gate classifies risk from them (a tap on "Pay" is staged), refuses an
 * action whose foreground app it cannot tell, and the device checks the app again before acting.
 */
const foregroundPackage: ParameterDefinition = {
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)+$' },
  description: 'foreground_package from the latest device.screen_observe: the app you expect to be in front',
  controller: 'model',
};
const targetText = (what: string): ParameterDefinition => ({
  schema: { type: 'string', maxLength: 2000 },
  description: `Visible text of ${what}, copied from the latest device.screen_observe; empty when it has none`,
  controller: 'model',
  optional: true,
});

const nullableText: JsonSchema = { type: ['string', 'null'] };

/** What every screen action reports: the outcome, not just "success" (changed may be false). */
const screenActionResult = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  required: ['succeeded', 'changed', 'foreground_package', 'screen', 'settled'],
  additionalProperties: false,
  properties: {
    succeeded: { type: 'boolean' },
    changed: {
      type: 'boolean',
      description: 'Whether anything on screen changed; false means the action had no visible effect.',
    },
    foreground_package: nullableText,
    screen: nullableText,
    settled: { type: 'boolean', description: 'Whether the screen stopped changing before the result was taken.' },
    ...extra,
  },
});

const target: JsonSchema = {
  oneOf: [
    {
      type: 'object',
      required: ['ref', 'text'],
      additionalProperties: false,
      properties: { ref: { type: 'string' }, text: { type: 'string' } },
    },
    { type: 'null' },
  ],
};

const contact: JsonSchema = {
  type: 'object',
  required: ['name', 'number'],
  additionalProperties: false,
  properties: { name: { type: 'string' }, number: { type: 'string', description: 'E.164 phone number.' } },
};

const bounds: JsonSchema = {
  type: 'object',
  required: ['left', 'top', 'right', 'bottom'],
  additionalProperties: false,
  properties: {
    left: { type: 'number' },
    top: { type: 'number' },
    right: { type: 'number' },
    bottom: { type: 'number' },
  },
};

/** The names device.delete_contacts_verified deletes; the same in every version. */
const contactNames: ParameterDefinition = {
  schema: {
    type: 'array',
    minItems: 1,
    maxItems: 50,
    uniqueItems: true,
    items: { type: 'string', minLength: 1, maxLength: 200 },
    examples: [['Bob Chen']],
  },
  description: 'Exact contact names to delete, as device.list_contacts shows them; 1 to 50 names',
  controller: 'model',
};

/** device.delete_contacts_verified's result: the names deleted, and the names skipped with one of `reasons`. */
const deleteContactsResult = (reasons: readonly string[]): JsonSchema => ({
  type: 'object',
  required: ['deleted', 'skipped'],
  additionalProperties: false,
  properties: {
    deleted: { type: 'array', items: { type: 'string' } },
    skipped: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'reason'],
        additionalProperties: false,
        properties: { name: { type: 'string' }, reason: { enum: [...reasons] } },
      },
    },
  },
});

/** The device extension's manifest. */
export const DEVICE_EXTENSION: ExtensionManifest = {
  apiVersion: 'ormuz.dev/v1',
  kind: 'Extension',
  metadata: {
    name: 'device',
    version: '1.1.0',
    description: 'Observe and act on an Android phone: read the screen, tap, type, navigate, contacts and messages.',
  },
  tools: [
    {
      name: 'device.screen_observe',
      version: 1,
      description:
        "Reads what the phone's screen shows now: the app in front (foreground_package), the screen name and its " +
        'elements, each with a ref, role, text, bounds and whether it can be tapped. Use it before a tap, ' +
        'type_text or swipe, and again after any action that changed the screen, because refs are valid only for ' +
        'the screen they came from. Returns at most max_elements elements; when partial is true, call again with ' +
        'the continuation to read the rest. Fails when the device cannot tell which app is in front (open an app ' +
        'first) or the continuation belongs to an older screen (observe again without it).',
      parameters: {
        max_elements: {
          schema: { type: 'integer', minimum: 1, maximum: 200, examples: [40] },
          description: 'Most elements to return in this page, 1 to 200; the device returns 40 when it is left out',
          controller: 'model',
          optional: true,
        },
        continuation: continuation('device.screen_observe'),
      },
      effect: 'read',
      risk_level: 'low',
      executor: 'device',
      timeout_ms: 10_000,
      output: {
        description:
          'The foreground app and screen, one page of elements, the total count, and a continuation when partial.',
        schema: {
          type: 'object',
          required: ['foreground_package', 'screen', 'elements', 'total_elements', 'partial'],
          additionalProperties: false,
          properties: {
            foreground_package: { type: 'string' },
            screen: { type: 'string' },
            elements: {
              type: 'array',
              items: {
                type: 'object',
                required: ['ref', 'role', 'text', 'bounds', 'clickable', 'depth'],
                additionalProperties: false,
                properties: {
                  ref: { type: 'string' },
                  role: { enum: ['button', 'text', 'input', 'list_item', 'switch', 'header'] },
                  text: { type: 'string' },
                  bounds,
                  clickable: { type: 'boolean' },
                  depth: { type: 'integer', minimum: 0 },
                  checked: { type: 'boolean' },
                },
              },
            },
            total_elements: { type: 'integer', minimum: 0 },
            partial: { type: 'boolean' },
            continuation: { type: 'string' },
          },
        },
      },
      skills: ['screen', 'read screen', 'what is on screen', 'ui'],
    },
    {
      name: 'device.tap',
      version: 1,
      description:
        'Taps one element on the current screen. Prefer ref from the latest device.screen_observe; use x and y ' +
        '(pixels) only when the element has no ref. Send either ref, or both x and y. Returns whether the tap ' +
        'succeeded, how the element was found (ref, text or coordinates), whether the screen changed, and the app ' +
        'and screen in front afterwards; changed may be false. Fails when the ref is not on the current screen ' +
        '(observe again) or the point lies outside the screen. A tap on a send, pay, delete or confirm button ' +
        "waits for the owner's approval.",
      parameters: {
        foreground_package: foregroundPackage,
        target_text: targetText('the element you tap'),
        ref: ref('the element to tap'),
        x: {
          schema: { type: 'number', minimum: 0, examples: [120] },
          description: 'Pixels from the left edge of the screen; only with y, and only when the element has no ref',
          controller: 'model',
          optional: true,
        },
        y: {
          schema: { type: 'number', minimum: 0, examples: [640] },
          description: 'Pixels from the top edge of the screen; only with x, and only when the element has no ref',
          controller: 'model',
          optional: true,
        },
      },
      combinations: [
        {
          oneOf: [['ref'], ['x', 'y']],
          message: 'Send a ref from the latest device.screen_observe, or both x and y (pixels).',
        },
      ],
      effect: 'write',
      risk_level: 'classify',
      executor: 'device',
      owner_summary: 'Tap {target_text|quote:80|or:an element} in {foreground_package}',
      timeout_ms: 10_000,
      output: {
        description: 'The outcome of the tap, how its target was resolved, and the screen afterwards.',
        schema: screenActionResult({
          strategy: { enum: ['ref', 'text', 'coordinates'] },
          target,
        }),
      },
      skills: ['tap', 'click', 'press button', 'select'],
    },
    {
      name: 'device.type_text',
      version: 1,
      description:
        'Types text into an input field on the current screen: the field given by ref (from the latest ' +
        'device.screen_observe), or the focused field when ref is left out. It does not submit anything; tap the ' +
        'send or OK button afterwards. Returns whether the text was entered, the field it went into and whether ' +
        'the screen changed. Fails when no input field is focused or the ref is not an input on the current screen.',
      parameters: {
        foreground_package: foregroundPackage,
        target_text: targetText('the field you type into'),
        text: {
          schema: { type: 'string', minLength: 1, maxLength: 5000, examples: ['Running 10 minutes late'] },
          description: 'The exact text to type into the field, up to 5000 characters',
          controller: 'model',
        },
        ref: ref('the input field to type into; leave it out to type into the focused field'),
      },
      effect: 'write',
      risk_level: 'classify',
      executor: 'device',
      owner_summary: 'Type {text|quote:120} in {foreground_package}',
      timeout_ms: 15_000,
      output: {
        description: 'The outcome of typing, the field that received the text, and the screen afterwards.',
        schema: screenActionResult({ target }),
      },
      skills: ['type', 'enter text', 'fill in', 'keyboard'],
    },
    {
      name: 'device.swipe',
      version: 1,
      description:
        'Scrolls the current screen by swiping in one direction: up reveals content further down, down reveals ' +
        'content above, left and right move between pages or tabs. Give ref to scroll inside one list; otherwise ' +
        'the whole screen scrolls. Returns whether the swipe was made and whether the screen changed; changed is ' +
        'false at the end of a list. Fails when the ref is not on the current screen.',
      parameters: {
        foreground_package: foregroundPackage,
        direction: {
          schema: { enum: ['up', 'down', 'left', 'right'], examples: ['up'] },
          description: 'Direction the finger moves: up, down, left or right',
          controller: 'model',
        },
        ref: ref('the list or area to scroll; leave it out to scroll the whole screen'),
      },
      effect: 'write',
      risk_level: 'classify',
      executor: 'device',
      timeout_ms: 10_000,
      output: {
        description: 'The outcome of the swipe and the screen afterwards.',
        schema: screenActionResult(),
      },
      skills: ['scroll', 'swipe', 'next page'],
    },
    {
      name: 'device.press_key',
      version: 1,
      description:
        'Presses one system key: back (leave the current screen or close the keyboard), home (go to the home ' +
        'screen), enter (submit the focused field) or recent_apps (show open apps). Use it to navigate when no ' +
        'on-screen button does the job. Returns whether the key was pressed, whether the screen changed and the ' +
        'app in front afterwards. Fails when the current app blocks the key.',
      parameters: {
        foreground_package: foregroundPackage,
        key: {
          schema: { enum: ['back', 'home', 'enter', 'recent_apps'], examples: ['back'] },
          description: 'The system key to press: back, home, enter or recent_apps',
          controller: 'model',
        },
      },
      effect: 'write',
      risk_level: 'classify',
      executor: 'device',
      owner_summary: 'Press {key} in {foreground_package}[, which taps {target_text|quote:80}]',
      timeout_ms: 5_000,
      output: {
        description: 'The outcome of the key press and the screen afterwards.',
        schema: screenActionResult(),
      },
      skills: ['back', 'home screen', 'navigate', 'go back'],
    },
    {
      name: 'device.open_app',
      version: 1,
      description:
        'Brings an installed app to the front at its home screen, by its Android package name (for example ' +
        'com.example.messages). Use it to start work in a specific app instead of tapping through the launcher. ' +
        'Returns the package and screen now in front and whether anything changed. Fails when the app is not ' +
        'installed; the error lists the installed packages.',
      parameters: {
        package_name: {
          schema: {
            type: 'string',
            minLength: 3,
            maxLength: 255,
            pattern: '^[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z][A-Za-z0-9_]*)+$',
            examples: ['com.example.messages'],
          },
          description: 'Package name of the Android app, such as com.example.messages',
          controller: 'model',
        },
      },
      effect: 'write',
      risk_level: 'classify',
      executor: 'device',
      timeout_ms: 15_000,
      output: {
        description: 'The app and screen in front after opening, and whether that changed.',
        schema: screenActionResult(),
      },
      skills: ['open app', 'launch', 'start app', 'switch app'],
    },
    {
      name: 'device.toggle_setting',
      version: 1,
      description:
        'Turns one system setting on or off: wifi, bluetooth, airplane_mode or location. It sets the desired ' +
        "state rather than flipping it, so repeating the call is harmless. Always waits for the owner's approval " +
        'before it runs. Returns the setting, its state before and after, and whether it changed. Fails when the ' +
        'device does not allow that setting to be changed.',
      parameters: {
        setting: {
          schema: { enum: ['wifi', 'bluetooth', 'airplane_mode', 'location'], examples: ['wifi'] },
          description: 'Which system setting to change: wifi, bluetooth, airplane_mode or location',
          controller: 'model',
        },
        desired_state: {
          schema: { enum: ['on', 'off'], examples: ['off'] },
          description: 'The state the setting should end in: on or off',
          controller: 'model',
        },
      },
      effect: 'write',
      risk_level: 'high',
      executor: 'device',
      owner_summary: 'Turn {desired_state} the setting {setting}',
      timeout_ms: 10_000,
      output: {
        description: 'The setting with its state before and after.',
        schema: {
          type: 'object',
          required: ['setting', 'previous_state', 'current_state', 'changed'],
          additionalProperties: false,
          properties: {
            setting: { enum: ['wifi', 'bluetooth', 'airplane_mode', 'location'] },
            previous_state: { enum: ['on', 'off'] },
            current_state: { enum: ['on', 'off'] },
            changed: { type: 'boolean' },
          },
        },
      },
      skills: ['wifi', 'bluetooth', 'airplane mode', 'location', 'settings'],
    },
    {
      name: 'device.list_contacts',
      version: 1,
      description:
        'Lists contacts saved on the phone with their names and phone numbers, optionally only those whose name ' +
        "contains name_query. Use it to find a recipient's exact name before device.send_message, or the exact " +
        'names to pass to device.delete_contacts_verified. Returns at most limit contacts, the total that matched, ' +
        'and a continuation when partial is true; an empty list means no contact matched. Fails when the ' +
        'continuation belongs to another query or the contacts changed since (list again without it).',
      parameters: {
        name_query: {
          schema: { type: 'string', maxLength: 100, examples: ['Alice'] },
          description: 'Part of a contact name to match, ignoring case; leave it out to list everyone',
          controller: 'model',
          optional: true,
        },
        limit: {
          schema: { type: 'integer', minimum: 1, maximum: 200, examples: [20] },
          description: 'Most contacts to return in this page, 1 to 200; the device returns 50 when it is left out',
          controller: 'model',
          optional: true,
        },
        continuation: continuation('device.list_contacts'),
      },
      effect: 'read',
      risk_level: 'low',
      executor: 'device',
      timeout_ms: 10_000,
      output: {
        description: 'One page of matching contacts, the total that matched, and a continuation when partial.',
        schema: {
          type: 'object',
          required: ['contacts', 'total', 'partial'],
          additionalProperties: false,
          properties: {
            contacts: { type: 'array', items: contact },
            total: { type: 'integer', minimum: 0 },
            partial: { type: 'boolean' },
            continuation: { type: 'string' },
          },
        },
      },
      skills: ['contacts', 'address book', 'phone number', 'find person'],
    },
    {
      name: 'device.delete_contacts_verified',
      version: 1,
      description:
        'Deletes the named contacts, re-checking each exact name on the phone just before deleting it. Use it only ' +
        "with names copied exactly from a recent device.list_contacts; it always waits for the owner's approval. " +
        'Returns the names deleted and the names skipped with the reason (not found, or more than one contact with ' +
        'that name). Fails as a whole when the contacts store is unavailable; then nothing is deleted.',
      parameters: { contact_names: contactNames },
      effect: 'write',
      risk_level: 'high',
      executor: 'device',
      owner_summary: 'Delete these contacts after re-checking each one: {contact_names}',
      timeout_ms: 30_000,
      output: {
        description: 'Which names were deleted and which were skipped, with why.',
        schema: deleteContactsResult(['not_found', 'ambiguous']),
      },
      skills: ['delete contacts', 'remove contact', 'clean up contacts'],
    },
    {
      // Version 2 adds the skip reason changed_since_listed; version 1 stays as published for grants pinned to it.
      name: 'device.delete_contacts_verified',
      version: 2,
      description:
        'Deletes the named contacts, re-checking each exact name on the phone just before deleting it. Use it only ' +
        "with names copied exactly from a recent device.list_contacts; it always waits for the owner's approval. " +
        'Returns the names deleted and the names skipped with the reason: not_found (no contact has that name), ' +
        'ambiguous (more than one contact has it) or changed_since_listed (the contact was edited or replaced after ' +
        'it was listed, so it was kept). For a changed_since_listed name, call device.list_contacts again and ask ' +
        'the owner whether to delete the contact as it is now. Fails as a whole when the contacts store is ' +
        'unavailable; then nothing is deleted.',
      parameters: { contact_names: contactNames },
      effect: 'write',
      risk_level: 'high',
      executor: 'device',
      owner_summary: 'Delete these contacts after re-checking each one: {contact_names}',
      timeout_ms: 30_000,
      output: {
        description: 'Which names were deleted and which were skipped, with why.',
        schema: deleteContactsResult(['not_found', 'ambiguous', 'changed_since_listed']),
      },
      skills: ['delete contacts', 'remove contact', 'clean up contacts'],
    },
    {
      name: 'device.send_message',
      version: 1,
      description:
        "Sends one text message to one contact, by the contact's exact name or phone number as " +
        "device.list_contacts shows it. Always waits for the owner's approval before anything is sent. Returns the " +
        "message id, the recipient's name and number, and when it was sent. Fails when no contact has that name or " +
        'number (nothing is sent; look the contact up with device.list_contacts) or the body is empty or longer ' +
        'than 2000 characters.',
      parameters: {
        recipient: {
          schema: { type: 'string', minLength: 1, maxLength: 200, examples: ['Alice Martin'] },
          description: "The contact's exact name or phone number, as device.list_contacts shows it",
          controller: 'model',
        },
        message_body: {
          schema: { type: 'string', minLength: 1, maxLength: 2000, examples: ['Running 10 minutes late.'] },
          description: 'The text of the message, 1 to 2000 characters',
          controller: 'model',
        },
      },
      effect: 'write',
      risk_level: 'high',
      executor: 'device',
      owner_summary: 'Send a text message to {recipient}: {message_body|quote}',
      timeout_ms: 30_000,
      output: {
        description: 'The sent message id, its recipient, and the time it was sent.',
        schema: {
          type: 'object',
          required: ['message_id', 'to', 'sent_at'],
          additionalProperties: false,
          properties: {
            message_id: { type: 'string' },
            to: contact,
            sent_at: { type: 'string', format: 'date-time' },
          },
        },
      },
      skills: ['sms', 'text message', 'messaging', 'send message'],
    },
  ],
};
