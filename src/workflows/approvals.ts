import { explainArgumentIssues, fillOmittedOptionals } from '../contract/edited-arguments.js';
import { formatIssues } from '../contract/format-issues.js';
import { planOfJsonSchema } from '../contract/json-schema-plan.js';
import { checkValue } from '../contract/value-check.js';
import type { CheckNode } from '../contract/value-check.js';
import { check } from './check.js';
import { APPROVE_ARGS, REJECT_ARGS } from './input-plans.js';
import { invalidUpdate } from './failures.js';
import type { ApprovalDecision, ApproveArgs, RejectArgs } from '../contract/run-messages.js';
import type { PendingApproval, RunState } from '../contract/run-state.js';
import type { ToolInfo } from '../contract/tool-info.js';

/** A person's answer to a call that waited for approval. */
export type Decision =
  { approved: true; argumentsJson?: string; note?: string } | { approved: false; reason?: string };

/**
 * The approvals of one run: which calls wait, and the decisions people sent. The validators run
 * before an update is accepted, so a bad update is refused (and leaves no trace in history) instead
 * of being silently taken.
 */
export class Approvals {
  private readonly decisions = new Map<string, Decision>();
  /** Each tool's parameters as a plan; `null` when the plan cannot say them. */
  private readonly plans = new Map<string, CheckNode | null>();

  constructor(
    private readonly state: RunState,
    private readonly tools: ReadonlyMap<string, ToolInfo>,
    /**
     * Whether edited arguments may leave a tool's optional fields out (they are filled in as `null`,
     * as the model sends them) and a refusal names each field's type (see `APPROVAL_ARGUMENTS_PATCH`).
     */
    private readonly fillOmitted = false,
  ) {}

  /** Marks a call as waiting and returns once decided, or `undefined` if `wait` gives up first. */
  async request(
    pending: PendingApproval,
    wait: (decided: () => boolean) => Promise<boolean>,
  ): Promise<Decision | undefined> {
    this.state.pendingApprovals.push(pending);
    try {
      await wait(() => this.decisions.has(pending.callId));
      return this.decisions.get(pending.callId);
    } finally {
      this.state.pendingApprovals = this.state.pendingApprovals.filter(
        (call) => call.callId !== pending.callId,
      );
    }
  }

  validateApprove(raw: unknown): void {
    const args = parse<ApproveArgs>(APPROVE_ARGS, raw);
    const pending = this.waiting(args.callId);
    if (args.arguments === undefined) return;
    const issues = this.checkArguments(pending.name, this.edited(pending.name, args.arguments));
    if (issues.length > 0) {
      throw invalidUpdate(`The edited arguments for ${pending.name} are invalid:\n${issues.join('\n')}`);
    }
  }

  approve(raw: ApproveArgs): ApprovalDecision {
    const args = parse<ApproveArgs>(APPROVE_ARGS, raw);
    const pending = this.state.pendingApprovals.find((call) => call.callId === args.callId);
    const edited =
      args.arguments !== undefined && pending !== undefined
        ? this.edited(pending.name, args.arguments)
        : args.arguments;
    this.decisions.set(args.callId, {
      approved: true,
      ...(edited !== undefined ? { argumentsJson: JSON.stringify(edited) } : {}),
      ...(args.note !== undefined ? { note: args.note } : {}),
    });
    return { callId: args.callId, decision: 'approved' };
  }

  validateReject(raw: unknown): void {
    this.waiting(parse<RejectArgs>(REJECT_ARGS, raw).callId);
  }

  reject(raw: RejectArgs): ApprovalDecision {
    const args = parse<RejectArgs>(REJECT_ARGS, raw);
    this.decisions.set(args.callId, {
      approved: false,
      ...(args.reason !== undefined ? { reason: args.reason } : {}),
    });
    return { callId: args.callId, decision: 'rejected' };
  }

  /** The call `callId` if it waits for a decision; a readable refusal otherwise. */
  private waiting(callId: string): PendingApproval {
    const pending = this.state.pendingApprovals.find((call) => call.callId === callId);
    if (pending !== undefined && !this.decisions.has(callId)) return pending;
    const decision = this.decisions.get(callId);
    if (decision !== undefined) {
      throw invalidUpdate(`Call ${callId} was already ${decision.approved ? 'approved' : 'rejected'}`);
    }
    const waiting = this.state.pendingApprovals.map((call) => `${call.callId} (${call.name})`);
    throw invalidUpdate(
      `No call ${callId} waits for approval; ${waiting.length > 0 ? `waiting: ${waiting.join(', ')}` : 'none does now'}`,
    );
  }

  /** Edited arguments with the tool's omitted optional fields filled in, where this run does that. */
  private edited(toolName: string, value: Record<string, unknown>): unknown {
    const parameters = this.tools.get(toolName)?.parameters;
    return this.fillOmitted && parameters !== undefined ? fillOmittedOptionals(parameters, value) : value;
  }

  /** Checks edited arguments against the tool's strict JSON Schema, as the model's would be. */
  private checkArguments(toolName: string, value: unknown): string[] {
    const parameters = this.tools.get(toolName)?.parameters;
    // Without a schema the executor still validates when the call runs; its observation says what was wrong.
    if (parameters === undefined) return [];
    let plan = this.plans.get(toolName);
    if (plan === undefined) {
      plan = planOfJsonSchema(parameters) ?? null;
      this.plans.set(toolName, plan);
    }
    // A schema beyond what a plan says ($ref, oneOf, format, …) is checked where the call runs.
    if (plan === null) return [];
    const parsed = checkValue(plan, value);
    if (parsed.success) return [];
    return this.fillOmitted ? explainArgumentIssues(parameters, value, parsed) : formatIssues(parsed);
  }
}

function parse<T>(plan: CheckNode, raw: unknown): T {
  const parsed = check<T>(plan, raw);
  if (!parsed.success) throw invalidUpdate(`Invalid update:\n${formatIssues(parsed).join('\n')}`);
  return parsed.data;
}
