import { defineQuery } from '@temporalio/workflow';
import type { RunState } from '../contract/run-state.js';

/** Live state of a run: phase, turn, pending calls, usage. Shared by the workflow and every client. */
export const stateQuery = defineQuery<RunState>('state');
