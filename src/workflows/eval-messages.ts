import { defineQuery } from '@temporalio/workflow';
import type { EvalRunState } from '../contract/eval-input.js';

/** The workflow type of an eval: one child `agentRun` per case. */
export const EVAL_RUN_WORKFLOW = 'evalRun';

/** Live state of an eval: its cases running and ended so far. Shared by the workflow and every client. */
export const evalStateQuery = defineQuery<EvalRunState>('keel.eval.state');
