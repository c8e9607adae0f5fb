import type { Provider } from '@nestjs/common';
import { ApiKeyStore } from '@ormuz/auth';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';

/** Agents' API keys, in libs/auth's `auth` schema (every service migrates it at start: service-kit's `openInfrastructure`). */
export const apiKeyStoreProvider: Provider = {
  provide: ApiKeyStore,
  inject: [INFRA],
  useFactory: (infra: Infrastructure) => new ApiKeyStore(infra.db),
};
