/** Text safe inside HTML. */
const escape = (text: string): string =>
  text.replace(/[&<>"']/gu, (character) => `&#${character.charCodeAt(0)};`);

/** The codec server's own page: a form to sign this browser in with the token, and what to set in the UI. */
export function signInPage(origins: readonly string[], note: string | undefined): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Keel codec server</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>Keel codec server</h1>
${note === undefined ? '' : `<p role="status">${escape(note)}</p>`}
<form method="post" action="/">
<label>Token <input name="token" type="password" autocomplete="off" required></label>
<button type="submit">Sign in</button>
</form>
<p>Signing in lets this browser decode payloads for the Temporal Web UI at ${origins.map(escape).join(', ')}.
In the UI's codec server settings, use this server's address and turn on
<em>Include cross-origin credentials</em>.</p>
</body></html>
`;
}
