/**
 * The platform's own tools (`ormuz.*`): searching the tool directory, activating a tool, reading more of a partial
 * result, checking a call's status. Load it with `Catalog.load(manifests, { core: CORE_EXTENSION })`.
 */
import type { ExtensionManifest } from '../manifest.js';

/** The core manifest, the only one allowed the reserved name `ormuz`. */
export const CORE_EXTENSION: ExtensionManifest = {
  apiVersion: 'ormuz.dev/v1',
  kind: 'Extension',
  metadata: {
    name: 'ormuz',
    version: '1.0.0',
    description: "The platform's own tools: the tool directory, partial results and call status.",
  },
  tools: [
    {
      name: 'ormuz.search_tools',
      version: 1,
      description:
        'Searches the directory of tools this conversation is allowed to use, by words describing the action ' +
        '(for example "send text message" or "wifi setting"). Use it when none of the tools you hold fits the ' +
        'task, then load the one you pick with ormuz.activate_tool. Returns up to max_results tools, best match ' +
        'first, each with its name, version, a summary and a score; an empty list means nothing you may use ' +
        'matches. Fails only when the query contains no words.',
      parameters: {
        query: {
          schema: { type: 'string', minLength: 1, maxLength: 200, examples: ['send text message'] },
          description: 'Words describing the action you need, e.g. "send text message"',
          controller: 'model',
        },
        max_results: {
          schema: { type: 'integer', minimum: 1, maximum: 20, examples: [5] },
          description: 'Most tools to return, 1 to 20; 5 when left out',
          controller: 'model',
          optional: true,
        },
      },
      effect: 'read',
      risk_level: 'low',
      executor: 'platform',
      timeout_ms: 2_000,
      output: {
        description: 'Matching tools, best first.',
        schema: {
          type: 'object',
          required: ['tools'],
          additionalProperties: false,
          properties: {
            tools: {
              type: 'array',
              items: {
                type: 'object',
                required: ['name', 'version', 'summary', 'score'],
                additionalProperties: false,
                properties: {
                  name: { type: 'string' },
                  version: { type: 'integer', minimum: 1 },
                  summary: { type: 'string' },
                  score: { type: 'number', minimum: 0, maximum: 1 },
                },
              },
            },
          },
        },
      },
      skills: ['find tool', 'tool directory', 'search'],
    },
    {
      name: 'ormuz.activate_tool',
      version: 1,
      description:
        'Loads one tool found with ormuz.search_tools so that you can call it from your next step on; pass its ' +
        'exact name. Returns the tool name, its version, its description and the JSON Schema of its arguments, ' +
        'and keeps it available for the rest of the conversation. Fails when no tool has that name or the tool ' +
        'is not permitted in this conversation.',
      parameters: {
        tool_name: {
          schema: { type: 'string', minLength: 3, maxLength: 64, examples: ['device.send_message'] },
          description: 'Exact name of the tool to load, as ormuz.search_tools returned it',
          controller: 'model',
        },
      },
      effect: 'write',
      risk_level: 'low',
      executor: 'platform',
      timeout_ms: 2_000,
      output: {
        description: 'The activated tool and its argument schema.',
        schema: {
          type: 'object',
          required: ['tool_name', 'version', 'description', 'parameters'],
          additionalProperties: false,
          properties: {
            tool_name: { type: 'string' },
            version: { type: 'integer', minimum: 1 },
            description: { type: 'string' },
            parameters: { type: 'object' },
          },
        },
      },
      skills: ['load tool', 'enable tool'],
    },
    {
      name: 'ormuz.read_more',
      version: 1,
      description:
        'Reads the next part of a result that was cut short. Use it when a result says partial: true and carries ' +
        'a continuation handle; pass the handle unchanged. Returns the next part of the content, whether it is ' +
        'still partial, and a new continuation when more remains. Fails when the handle has expired or was not ' +
        'issued in this conversation; then call the original tool again.',
      parameters: {
        continuation: {
          schema: { type: 'string', minLength: 1, maxLength: 4096 },
          description: 'Continuation handle from the partial result, passed back unchanged',
          controller: 'model',
        },
        max_result_chars: {
          schema: { type: 'integer', minimum: 256, maximum: 100_000 },
          description: 'Most characters of content returned per part; set per deployment to fit the model tier',
          controller: 'designer',
        },
      },
      effect: 'read',
      risk_level: 'low',
      executor: 'platform',
      timeout_ms: 5_000,
      output: {
        description: 'The next part of the content and whether more remains.',
        schema: {
          type: 'object',
          required: ['content', 'partial'],
          additionalProperties: false,
          properties: {
            content: {},
            partial: { type: 'boolean' },
            continuation: { type: 'string' },
          },
        },
      },
      skills: ['more results', 'next page', 'continue'],
    },
    {
      name: 'ormuz.check_call_status',
      version: 1,
      description:
        'Reads the recorded status of an earlier tool call by its call_id, without running anything again. Use ' +
        'it after a result said the outcome is unknown or a call is waiting for approval, before deciding whether ' +
        'to retry. Returns the status (such as pending_confirmation, running, succeeded, failed or ' +
        'outcome_unknown), the result or error when there is one, and when it last changed. Fails when no call ' +
        'with that id exists in this conversation.',
      parameters: {
        call_id: {
          schema: {
            type: 'string',
            minLength: 1,
            maxLength: 128,
            pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$',
          },
          description: 'The call_id from the earlier result or pending_confirmation',
          controller: 'model',
        },
      },
      effect: 'read',
      risk_level: 'low',
      executor: 'platform',
      timeout_ms: 2_000,
      output: {
        description: 'The call status from the log; status never acts.',
        schema: {
          type: 'object',
          required: ['call_id', 'status', 'updated_at'],
          additionalProperties: false,
          properties: {
            call_id: { type: 'string' },
            status: { type: 'string' },
            result: {},
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' } },
            },
            updated_at: { type: 'string', format: 'date-time' },
          },
        },
      },
      skills: ['call status', 'did it work', 'pending approval', 'outcome unknown'],
    },
  ],
};
