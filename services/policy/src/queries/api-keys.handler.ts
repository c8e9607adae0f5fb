import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { ApiKeyStore } from '@ormuz/auth';
import type { ApiKeyListV1, ListApiKeysRequestV1 } from '@ormuz/contracts';

export class ApiKeysQuery extends Query<ApiKeyListV1> {
  constructor(readonly request: ListApiKeysRequestV1) {
    super();
  }
}

/** A tenant's API keys (or one agent's), with their state: never a key, never a hash. */
@QueryHandler(ApiKeysQuery)
export class ApiKeysHandler implements IQueryHandler<ApiKeysQuery> {
  constructor(private readonly keys: ApiKeyStore) {}

  execute({ request }: ApiKeysQuery): Promise<ApiKeyListV1> {
    return this.keys.list(request);
  }
}
