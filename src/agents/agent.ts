import type { z } from 'zod';
import type { AgentDefinition } from './agent-definition.js';

/** A named agent a worker offers, as `defineAgent` checked it. */
export type Agent = Readonly<z.output<typeof AgentDefinition>>;
