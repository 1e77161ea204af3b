import { describe, expect, it } from 'vitest';
import { dynamicConfigArguments, missingServerSettings } from '../../src/server-settings.js';

describe("Keel's Temporal server settings", () => {
  it('become one --dynamic-config-value per setting, the value as JSON', () => {
    expect(dynamicConfigArguments()).toEqual([
      '--dynamic-config-value',
      'history.transferProcessorMaxPollRPS=1000',
    ]);
    expect(dynamicConfigArguments({ 'system.enableActivityEagerExecution': true, 'a.b': 'x' })).toEqual([
      '--dynamic-config-value',
      'system.enableActivityEagerExecution=true',
      '--dynamic-config-value',
      'a.b="x"',
    ]);
  });

  it("name those a server's command line lacks, as an older Keel started it", () => {
    const start = ['server', 'start-dev', '--port', '7233'];
    expect(missingServerSettings([...start, ...dynamicConfigArguments()])).toEqual([]);
    expect(missingServerSettings(start)).toEqual(['history.transferProcessorMaxPollRPS=1000']);
    // A value elsewhere on the line, or another value, is not the setting.
    expect(
      missingServerSettings([
        ...start,
        'history.transferProcessorMaxPollRPS=1000',
        '--dynamic-config-value',
        'history.transferProcessorMaxPollRPS=20',
      ]),
    ).toEqual(['history.transferProcessorMaxPollRPS=1000']);
  });
});
