import { describe, expect, it } from 'vitest';
import {
  canonicalArguments,
  compactCallDiff,
  countChanges,
  diffCalls,
  shortCall,
} from '../../src/eval/call-diff.js';
import { transcript } from './transcripts.js';
import type { CallSpec } from './transcripts.js';

const run = (...calls: CallSpec[]) => transcript({ turns: [{ calls }, {}] });
const changes = (before: CallSpec[], after: CallSpec[]) =>
  diffCalls(run(...before), run(...after)).map((entry) => `${entry.change} ${entry.name}`);

describe('diffCalls', () => {
  it('keeps calls whose arguments differ only in key order or spacing', () => {
    const entries = diffCalls(
      run(['write_file', '{"path":"a.txt","text":"hi","options":{"x":1,"y":[1,2]}}']),
      run(['write_file', '{ "options": {"y":[1, 2], "x": 1.0}, "text": "hi", "path": "a.txt" }']),
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ change: 'kept', recordedIndex: 0, candidateIndex: 0 });
    expect(entries[0]!.arguments).toBe('{"options":{"x":1,"y":[1,2]},"path":"a.txt","text":"hi"}');
  });

  it('treats other argument values as different calls', () => {
    expect(changes([['read_file', { path: 'a.txt' }]], [['read_file', { path: 'b.txt' }]])).toEqual([
      'removed read_file',
      'added read_file',
    ]);
  });

  it('marks calls only the candidate made as added and only the recording made as removed', () => {
    expect(
      changes(
        [
          ['read_file', { path: 'a' }],
          ['write_file', { path: 'b' }],
          ['echo', { text: 'x' }],
        ],
        [
          ['read_file', { path: 'a' }],
          ['list_dir', { path: '.' }],
          ['echo', { text: 'x' }],
        ],
      ),
    ).toEqual(['kept read_file', 'removed write_file', 'added list_dir', 'kept echo']);
  });

  it('finds the longest common subsequence when calls are reordered', () => {
    const a: CallSpec = ['a', {}];
    const b: CallSpec = ['b', {}];
    const c: CallSpec = ['c', {}];
    const entries = diffCalls(run(a, b, c), run(b, c, a));
    expect(countChanges(entries)).toEqual({ kept: 2, removed: 1, added: 1 });
    expect(entries.map((entry) => `${entry.change} ${entry.name}`)).toEqual([
      'removed a',
      'kept b',
      'kept c',
      'added a',
    ]);
  });

  it('counts calls across turns and gives each side its own indices', () => {
    const before = transcript({ turns: [{ calls: [['a', {}]] }, { calls: [['b', {}]] }, {}] });
    const after = transcript({
      turns: [
        {
          calls: [
            ['a', {}],
            ['x', {}],
          ],
        },
        { calls: [['b', {}]] },
        {},
      ],
    });
    expect(diffCalls(before, after)).toEqual([
      { change: 'kept', name: 'a', arguments: '{}', recordedIndex: 0, candidateIndex: 0 },
      { change: 'added', name: 'x', arguments: '{}', candidateIndex: 1 },
      { change: 'kept', name: 'b', arguments: '{}', recordedIndex: 1, candidateIndex: 2 },
    ]);
  });

  it('is not fooled by prototype names as tools or keys', () => {
    const entries = diffCalls(
      run(['__proto__', '{"__proto__":{"polluted":1},"toString":2}'], ['toString', '{}']),
      run(['__proto__', '{"toString":2,"__proto__":{"polluted":1}}'], ['constructor', '{}']),
    );
    expect(entries.map((entry) => `${entry.change} ${entry.name}`)).toEqual([
      'kept __proto__',
      'removed toString',
      'added constructor',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('compares arguments that are not JSON as written', () => {
    expect(canonicalArguments('{not json')).toBe('{not json');
    expect(changes([['a', '{not json']], [['a', '{not json']])).toEqual(['kept a']);
    expect(changes([['a', '{not json']], [['a', '{not  json']])).toEqual(['removed a', 'added a']);
  });

  it('diffs long sequences without a quadratic blow-up', () => {
    const many = (prefix: string) => Array.from({ length: 3000 }, (_, i): CallSpec => [`${prefix}${i}`, {}]);
    const entries = diffCalls(run(...many('a')), run(...many('b')));
    expect(countChanges(entries)).toEqual({ kept: 0, removed: 3000, added: 3000 });
  });
});

describe('compactCallDiff', () => {
  it('writes the diff on one line with = - + marks and short arguments', () => {
    const entries = diffCalls(
      run(['read_file', { path: 'a.txt' }], ['write_file', { path: 'b.txt', text: 'hello\nworld' }]),
      run(['read_file', { path: 'a.txt' }], ['list_dir', { path: '.' }]),
    );
    expect(compactCallDiff(entries)).toBe(
      '= read_file(a.txt) ; - write_file(b.txt, hello world) ; + list_dir(.)',
    );
    expect(compactCallDiff([])).toBe('(no calls)');
  });

  it('cuts long arguments', () => {
    expect(shortCall('echo', JSON.stringify({ text: 'x'.repeat(100) }), 10)).toBe(`echo(${'x'.repeat(9)}…)`);
  });
});
