import { InvalidArgumentError, type Command } from 'commander';
import { ALL_TENANTS, DevIssuer, ROLES, type Role } from '@ormuz/auth';
import { identifierProblem } from '@ormuz/contracts';
import { CliInputError, type CliContext } from '../context.js';

const TENANT_OR_ALL = (value: string) => {
  const problem = value === ALL_TENANTS ? undefined : identifierProblem(value);
  if (problem) throw new InvalidArgumentError(`a tenant id, or * for a platform administrator (${problem})`);
  return value;
};

function role(value: string, previous: Role[] = []): Role[] {
  if (!(ROLES as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${ROLES.join(', ')}`);
  return [...previous, value as Role];
}

export function registerAuthCommands(program: Command, ctx: () => CliContext): void {
  const auth = program.command('auth').description('credentials for people: tokens from the development issuer');

  auth
    .command('token')
    .description(
      'print a bearer token signed by the development issuer (only where the services trust it: ORMUZ_AUTH_ISSUER unset)',
    )
    .requiredOption('--tenant <tenant>', 'tenant the token acts in (* for a platform administrator)', TENANT_OR_ALL)
    .requiredOption('--role <role>', `a role (repeatable): ${ROLES.join(', ')}`, role)
    .requiredOption('--sub <subject>', 'who it is (recorded as the approver of what they decide), e.g. alice@acme')
    .option(
      '--agent <agent>',
      'an agent an owner decides for (repeatable; default: every agent)',
      (v: string, p: string[] = []) => [...p, v],
    )
    .option('--ttl <seconds>', 'lifetime in seconds (default 3600)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 30 * 86_400) throw new InvalidArgumentError('1 to 2592000 seconds');
      return n;
    })
    .action(async (o: { tenant: string; role: Role[]; sub: string; agent?: string[]; ttl?: number }) => {
      const { auth: settings } = ctx().config;
      if (!settings.devIssuerDir) {
        throw new CliInputError(
          `The services trust ${settings.issuer}, not the development issuer: sign in with that provider instead.`,
        );
      }
      if (o.sub.length === 0 || o.sub.length > 200 || /\p{Cc}/u.test(o.sub)) {
        throw new CliInputError('--sub must be 1 to 200 printable characters.');
      }
      const issuer = await DevIssuer.open(settings.devIssuerDir);
      const token = await issuer.sign({
        tenant: o.tenant,
        roles: o.role,
        subject: o.sub,
        ...(o.agent ? { agents: o.agent } : {}),
        ...(o.ttl ? { ttlSeconds: o.ttl } : {}),
        audience: settings.audience,
      });
      // The bare token on stdout, so `export ORMUZ_TOKEN=$(ormuz auth token …)` works; --json adds what it holds.
      ctx().print({ token, tenant: o.tenant, roles: o.role, sub: o.sub }, () => token);
    });
}
