import { createInterface } from 'node:readline';
import type { Interface } from 'node:readline';
import { lineEditorOpen } from './ctrl-c-key.js';

/** What a person answered: a line, end of input (Ctrl-D), or Ctrl-C at an empty line. */
export type PromptAnswer = { kind: 'line'; text: string } | { kind: 'eof' } | { kind: 'interrupt' };

/**
 * Asks for one line at a time on stdin. In a terminal each question has its own line editor (with
 * the history of earlier messages), closed before the answer returns. The editor reads Ctrl-C
 * itself; between questions (while the model works) `withCtrlCKey` keeps the terminal in raw mode
 * and hands Ctrl-C to the SIGINT listeners (cancel or detach), so the key never reaches both, nor
 * the rest of the foreground process group (npm under `npx keel`). From a pipe
 * one reader serves every question, so no line read ahead is lost between two of them.
 */
export class LinePrompt {
  readonly #terminal = process.stdin.isTTY && process.stdout.isTTY;
  readonly #history: string[] = [];
  #piped: { reader: Interface; lines: AsyncIterator<string> } | undefined;

  /** Asks `query`; `prefill` is put on the line to edit; `remember` keeps the answer in the history. */
  ask(query: string, options: { prefill?: string; remember?: boolean } = {}): Promise<PromptAnswer> {
    return this.#terminal ? this.#askTerminal(query, options) : this.#askPiped(query);
  }

  /** Lets go of stdin. */
  close(): void {
    this.#piped?.reader.close();
  }

  #askTerminal(query: string, options: { prefill?: string; remember?: boolean }): Promise<PromptAnswer> {
    return new Promise((resolve) => {
      const release = lineEditorOpen();
      const editor = createInterface({
        input: process.stdin,
        output: process.stdout,
        terminal: true,
        history: [...this.#history],
        historySize: 200,
        removeHistoryDuplicates: true,
      });
      let settled = false;
      const settle = (answer: PromptAnswer): void => {
        if (settled) return;
        settled = true;
        editor.close();
        release();
        if (answer.kind === 'line' && options.remember && answer.text.trim() !== '')
          this.#history.unshift(answer.text);
        resolve(answer);
      };
      // The editor reads keys itself: Ctrl-C clears a line being typed, and at an empty line leaves.
      editor.on('SIGINT', () => {
        if (editor.line !== '') {
          editor.write(null, { ctrl: true, name: 'e' });
          editor.write(null, { ctrl: true, name: 'u' });
          return;
        }
        process.stdout.write('\n');
        settle({ kind: 'interrupt' });
      });
      editor.on('close', () => {
        if (!settled) process.stdout.write('\n');
        settle({ kind: 'eof' });
      });
      editor.question(query, (text) => settle({ kind: 'line', text }));
      if (options.prefill) editor.write(options.prefill);
    });
  }

  async #askPiped(query: string): Promise<PromptAnswer> {
    if (!this.#piped) {
      const reader = createInterface({ input: process.stdin, terminal: false });
      this.#piped = { reader, lines: reader[Symbol.asyncIterator]() };
    }
    process.stdout.write(query);
    const next = await this.#piped.lines.next();
    if (next.done) {
      process.stdout.write('\n');
      return { kind: 'eof' };
    }
    // What was read is echoed, so the transcript shows both sides.
    const text = String(next.value);
    process.stdout.write(text + '\n');
    return { kind: 'line', text };
  }
}
