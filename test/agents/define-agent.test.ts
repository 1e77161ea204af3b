import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentDefinitionError } from '../../src/agents/agent-definition-error.js';
import { agentVersion } from '../../src/agents/agent-version.js';
import { defineAgent } from '../../src/agents/define-agent.js';
import { describeAgents } from '../../src/agents/describe-agents.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';

const lookup = (description = 'Look a ticket up.') =>
  defineTool({
    name: 'lookup',
    description,
    schema: z.object({ id: z.string() }),
    readOnly: true,
    execute: ({ id }) => id,
  });

describe('defineAgent', () => {
  it('refuses a malformed definition with every problem named', () => {
    expect(() => defineAgent({ name: 'bad name', instructions: ' ' })).toThrow(AgentDefinitionError);
    expect(() => defineAgent({ name: 'bad name', instructions: ' ' })).toThrow(
      /Agent bad name is invalid:\nname: is not a valid agent name\ninstructions: must say what the agent does/,
    );
    expect(() =>
      defineAgent({ name: 'a', instructions: 'x', tools: ['lookup'], approvalTools: ['deploy'] }),
    ).toThrow(/approvalTools\[0\]: names deploy, which is not among the agent's tools/);
    expect(() => defineAgent({ name: 'a', instructions: 'x', limits: { maxTurns: 0 } })).toThrow(
      /limits.maxTurns/,
    );
    expect(() => defineAgent({ name: 'a', instructions: 'x', colour: 'red' } as never)).toThrow(/colour/);
    expect(() => defineAgent({ name: 'a', instructions: 'x', maxOutputTokens: 8 })).toThrow(
      /maxOutputTokens/,
    );
  });

  it('hands its output cap to the profile runs read it from, and none when it sets none', () => {
    const tools = new ToolRegistry([lookup()]);
    const profiles = describeAgents(
      [
        defineAgent({ name: 'brief', instructions: 'Answer in a line.', maxOutputTokens: 256 }),
        defineAgent({ name: 'free', instructions: 'Answer.' }),
      ],
      tools,
    );
    expect(profiles.get('brief')?.maxOutputTokens).toBe(256);
    expect(profiles.get('free')).not.toHaveProperty('maxOutputTokens');
  });
});

describe('an agent’s version', () => {
  it('is the same for the same instructions and tools, whatever the key order of the schemas', () => {
    const tool = {
      name: 't',
      description: 'd',
      parameters: { type: 'object', properties: { a: {}, b: {} } },
    };
    const reordered = {
      description: 'd',
      parameters: { properties: { b: {}, a: {} }, type: 'object' },
      name: 't',
    };
    expect(agentVersion('Do it.', [tool])).toBe(agentVersion('Do it.', [reordered]));
    expect(agentVersion('Do it.', [tool])).toMatch(/^[0-9a-f]{16}$/);
  });

  it('changes with the instructions, a tool’s description or schema, and the tools offered', () => {
    const registry = (description?: string) => new ToolRegistry([lookup(description)]);
    const version = (instructions: string, tools: ToolRegistry, names?: string[]) =>
      describeAgents(
        [defineAgent({ name: 'a', instructions, ...(names ? { tools: names } : {}) })],
        tools,
      ).get('a')!.version;
    const base = version('Triage.', registry());
    expect(version('Triage.', registry())).toBe(base);
    expect(version('Triage!', registry())).not.toBe(base);
    expect(version('Triage.', registry('Find a ticket.'))).not.toBe(base);
    expect(version('Triage.', registry(), [])).not.toBe(base);
    const otherSchema = new ToolRegistry([
      defineTool({
        name: 'lookup',
        description: 'Look a ticket up.',
        schema: z.object({ id: z.number() }),
        readOnly: true,
        execute: ({ id }) => String(id),
      }),
    ]);
    expect(version('Triage.', otherSchema)).not.toBe(base);
  });
});

describe('a worker’s agents', () => {
  it('must name tools the worker has, and each name once', () => {
    const tools = new ToolRegistry([lookup()]);
    expect(() =>
      describeAgents([defineAgent({ name: 'a', instructions: 'x', tools: ['deploy'] })], tools),
    ).toThrow('Agent a names tool(s) deploy that this worker does not have; it has lookup');
    const agent = defineAgent({ name: 'a', instructions: 'x' });
    expect(() => describeAgents([agent, agent], tools)).toThrow('Agent a is defined twice');
  });
});
