/**
 * A tenant's own word on which apps are finance apps, on top of the built-in lists: `finance` packages make every
 * screen action in them high (the deny side), `not_finance` packages are never judged finance apps, by list, name or
 * screen (the allow side). Each package also covers the packages under it. Pure.
 */

/** Most packages in each list. */
export const MAX_TENANT_APPS = 500;

const ANDROID_PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+$/;
const MAX_PACKAGE_LENGTH = 255;

/** A tenant's lists as stored and sent. */
export interface TenantAppListsV1 {
  readonly finance: readonly string[];
  readonly not_finance: readonly string[];
}

/**
 * What is wrong with `lists`, one sentence per problem worded as the fix; empty when they can be used. Checked:
 * each entry is an Android package name (a trailing `.*` is allowed and means the same), each list holds at most
 * {@link MAX_TENANT_APPS}, and no package is in both lists.
 */
export function tenantAppListProblems(lists: TenantAppListsV1): string[] {
  const problems: string[] = [];
  for (const [side, option] of [
    ['finance', '--finance'],
    ['not_finance', '--not-finance'],
  ] as const) {
    const list = lists[side];
    if (list.length > MAX_TENANT_APPS) {
      problems.push(
        `${option} holds ${list.length} packages; at most ${MAX_TENANT_APPS} are allowed, so list a prefix (com.example) instead of each app.`,
      );
    }
    for (const pkg of list) {
      const p = canonicalPackage(pkg);
      if (p.length > MAX_PACKAGE_LENGTH || !ANDROID_PACKAGE.test(p)) {
        problems.push(
          `${option} entry ${JSON.stringify(pkg.slice(0, 120))} is not an Android package name; write it as the app's ` +
            'package, e.g. com.example.bank (the id= in its Play Store address).',
        );
      }
    }
  }
  const finance = new Set(lists.finance.map(canonicalPackage));
  const both = [...new Set(lists.not_finance.map(canonicalPackage))].filter((p) => finance.has(p));
  if (both.length > 0) {
    problems.push(
      `${both.map((p) => JSON.stringify(p)).join(', ')} ${both.length === 1 ? 'is' : 'are'} in both --finance and ` +
        '--not-finance; keep each package in one list.',
    );
  }
  return problems;
}

/** `com.Example.Bank.*` → `com.example.bank`: how lists are compared and stored. */
export function canonicalPackage(pkg: string): string {
  return pkg.trim().toLowerCase().replace(/\.\*$/, '');
}

/** What a tenant's lists say of one package. */
export type TenantAppVerdict = 'finance' | 'not_finance' | undefined;

/**
 * A tenant's lists, compiled for lookups. Build one per stored version of the lists and reuse it. The most specific
 * entry wins: with `com.acme` in `finance` and `com.acme.notes` in `not_finance`, `com.acme.notes.beta` is not
 * finance and `com.acme.pay` is.
 */
export class TenantAppLists {
  private readonly entries = new Map<string, 'finance' | 'not_finance'>();

  /** @throws Error naming the problems when `lists` fails {@link tenantAppListProblems}. */
  constructor(readonly lists: TenantAppListsV1) {
    const problems = tenantAppListProblems(lists);
    if (problems.length > 0) throw new Error(problems.join(' '));
    for (const p of lists.not_finance) this.entries.set(canonicalPackage(p), 'not_finance');
    for (const p of lists.finance) this.entries.set(canonicalPackage(p), 'finance');
  }

  /** What the lists say of `pkg` (any case), or `undefined` when neither names it or a package above it. */
  verdict(pkg: string): TenantAppVerdict {
    let name = pkg.toLowerCase();
    for (;;) {
      const found = this.entries.get(name);
      if (found !== undefined) return found;
      const dot = name.lastIndexOf('.');
      if (dot <= 0) return undefined;
      name = name.slice(0, dot);
    }
  }

  get empty(): boolean {
    return this.entries.size === 0;
  }
}
