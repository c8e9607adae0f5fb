/**
 * Points a projection's queries at a copy of its tables in another schema, for a rebuild beside the live read model:
 * every table named in `from` (by `withSchema`, `sql.table('from.t')` or a qualified reference) is read and written in
 * `to` instead. The projection's own code runs unchanged; only the connection it is handed carries this plugin.
 */
import {
  OperationNodeTransformer,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type SchemableIdentifierNode,
  type UnknownRow,
  type QueryId,
} from 'kysely';
import { OrmuzError } from '@ormuz/contracts';

/** A query of a redirected projection named a schema that is neither the live one nor the copy's. */
export class SchemaOutsideRebuildError extends OrmuzError {
  readonly code = 'schema_outside_rebuild';
  constructor(
    readonly schema: string,
    from: string,
  ) {
    super(
      `A projection rebuilt away from ${from} touched schema ${schema}: a rebuild only writes its own copy, so the ` +
        'query was stopped before it ran.',
    );
  }
}

class Redirect extends OperationNodeTransformer {
  constructor(
    private readonly from: string,
    private readonly to: string,
  ) {
    super();
  }

  protected override transformSchemableIdentifier(node: SchemableIdentifierNode, queryId?: QueryId) {
    const transformed = super.transformSchemableIdentifier(node, queryId);
    const schema = transformed.schema?.name;
    if (schema === undefined || schema === this.to) return transformed;
    if (schema !== this.from) throw new SchemaOutsideRebuildError(schema, this.from);
    return { ...transformed, schema: { kind: 'IdentifierNode' as const, name: this.to } };
  }
}

export class SchemaRedirect implements KyselyPlugin {
  private readonly redirect: Redirect;

  constructor(from: string, to: string) {
    this.redirect = new Redirect(from, to);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.redirect.transformNode(args.node, args.queryId);
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}
