import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { offeredToolsOf, searchTools, type Catalog, type Grant, type ToolSearchHit } from '@ormuz/catalog';
import type { AgentRequestV1, OfferedToolV1, SearchToolsRequestV1 } from '@ormuz/contracts';
import { CATALOG } from '../domain/catalog.provider.js';
import { GrantsRepository } from '../persistence/grants.repository.js';

export class OfferedToolsQuery extends Query<{ grant: Grant; tools: OfferedToolV1[] }> {
  constructor(readonly request: AgentRequestV1) {
    super();
  }
}

export class SearchToolsQuery extends Query<{ hits: ToolSearchHit[] }> {
  constructor(readonly request: SearchToolsRequestV1) {
    super();
  }
}

/** The tools an agent is offered: its grant intersected with the catalog. Denied tools are never offered. */
@QueryHandler(OfferedToolsQuery)
export class OfferedToolsHandler implements IQueryHandler<OfferedToolsQuery> {
  constructor(
    private readonly grants: GrantsRepository,
    @Inject(CATALOG) private readonly catalog: Catalog,
  ) {}

  async execute({ request }: OfferedToolsQuery) {
    const grant = await this.grants.effective(request.tenant, request.agent_id);
    const tools = offeredToolsOf(this.catalog, grant);
    return { grant, tools };
  }
}

@QueryHandler(SearchToolsQuery)
export class SearchToolsHandler implements IQueryHandler<SearchToolsQuery> {
  constructor(
    private readonly grants: GrantsRepository,
    @Inject(CATALOG) private readonly catalog: Catalog,
  ) {}

  async execute({ request }: SearchToolsQuery) {
    const grant = await this.grants.effective(request.tenant, request.agent_id);
    return { hits: searchTools(this.catalog, grant, request.query, request.limit ?? 5) };
  }
}
