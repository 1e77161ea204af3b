/** The team's own activity, unrelated to Keel. */
export function composeGreeting(name: string): Promise<string> {
  return Promise.resolve(`Hello, ${name}!`);
}
