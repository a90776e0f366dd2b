import {
  OperationNodeTransformer,
  OperatorNode,
  UnaryOperationNode,
  ValueNode,
  type KyselyPlugin,
  type LimitNode,
  type OffsetNode,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/** `+ ?` instead of `?`: the same value, as an expression whose value SQLite does not plan with. */
function unplanned(value: OperationNode): OperationNode {
  return ValueNode.is(value) && value.immediate !== true
    ? UnaryOperationNode.create(OperatorNode.create('+'), value)
    : value;
}

class LimitTransformer extends OperationNodeTransformer {
  protected override transformLimit(node: LimitNode): LimitNode {
    const transformed = super.transformLimit(node);
    return { ...transformed, limit: unplanned(transformed.limit) };
  }

  protected override transformOffset(node: OffsetNode): OffsetNode {
    const transformed = super.transformOffset(node);
    return { ...transformed, offset: unplanned(transformed.offset) };
  }
}

/**
 * Sends every bound LIMIT and OFFSET to SQLite as `+ ?`. SQLite plans with the value bound to a
 * bare `limit ?`, so each binding, even of the same value, makes it compile the statement again
 * on its next run: a 50-row list page took 64 against 54 µs, and the service's whole list 118
 * against 90 µs. An expression keeps the one plan (the sort's index, checked by
 * test/query-plans.test.ts); SQLite reads its value when the statement runs.
 */
export class SqliteLimitsPlugin implements KyselyPlugin {
  readonly #transformer = new LimitTransformer();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#transformer.transformNode(args.node, args.queryId);
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}
