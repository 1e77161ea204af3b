import { describe, expect, it } from 'vitest';
import { RunInput } from '../../src/contract/run-input.js';
import type { WorkerProfile } from '../../src/contract/tool-info.js';
import { applyAgent } from '../../src/workflows/apply-agent.js';

const profile: WorkerProfile = {
  tools: [],
  defaultModel: 'worker-model',
  agents: ['triage'],
  agent: { name: 'triage', version: 'abc123', instructions: 'Label the ticket.' },
};

describe('applyAgent', () => {
  it('stamps the agent it runs under, and says so when the run brought instructions of its own', () => {
    const own = applyAgent(RunInput.parse({ agent: 'triage', task: 't' }), profile);
    expect(own.agent).toEqual({ name: 'triage', version: 'abc123' });
    expect(own.input.instructions).toBe('Label the ticket.');
    const overridden = applyAgent(
      RunInput.parse({ agent: 'triage', task: 't', instructions: 'Ignore it.' }),
      profile,
    );
    expect(overridden.agent).toEqual({ name: 'triage', version: 'abc123', instructionsOverridden: true });
    expect(overridden.input.instructions).toBe('Ignore it.');
  });

  it("caps the agent's turns at its maxOutputTokens, unless the run sets its own", () => {
    const capped: WorkerProfile = { ...profile, agent: { ...profile.agent!, maxOutputTokens: 800 } };
    expect(applyAgent(RunInput.parse({ agent: 'triage', task: 't' }), capped).input.maxOutputTokens).toBe(
      800,
    );
    expect(
      applyAgent(RunInput.parse({ agent: 'triage', task: 't', maxOutputTokens: 64 }), capped).input
        .maxOutputTokens,
    ).toBe(64);
    expect(applyAgent(RunInput.parse({ agent: 'triage', task: 't' }), profile).input).not.toHaveProperty(
      'maxOutputTokens',
    );
  });
});
