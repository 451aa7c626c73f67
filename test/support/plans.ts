// PostgreSQL plans as `EXPLAIN (FORMAT JSON)` returns them, for the tests that
// check a statement's plan shape (test/db/history-plans, sweeper-plans).

/** A node of the plan: the keys these tests read. */
export interface PlanNode {
  'Node Type': string;
  Operation?: string;
  'Join Type'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Parent Relationship'?: string;
  Plans?: PlanNode[];
}

/** Every node of the plan, parents before their children. */
export function* nodes(plan: PlanNode): Generator<PlanNode> {
  yield plan;
  for (const child of plan.Plans ?? []) yield* nodes(child);
}
