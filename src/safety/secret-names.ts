/**
 * Words that mark a variable as holding a credential when they are a whole word of its name
 * (`DB_PASSWORDS`, `X_AUTH_TOKEN`, `SESSION`), after a plural `S` and trailing digits are dropped.
 * `PWD` alone is the shell's working directory, so it counts only beside another word (`DB_PWD`).
 */
const SECRET_WORDS = new Set([
  'KEY',
  'TOKEN',
  'SECRET',
  'PASSWORD',
  'PASSWD',
  'PWD',
  'PASS',
  'PASSPHRASE',
  'PASSCODE',
  'CREDENTIAL',
  'CRED',
  'AUTH',
  'OAUTH',
  'AUTHORIZATION',
  'AUTHORISATION',
  'BEARER',
  'COOKIE',
  'SESSION',
  'JWT',
  'DSN',
  'SALT',
]);

/**
 * Words that end a compound credential word (`APIKEY`, `AUTHTOKEN`, `CLIENTSECRET`). `KEY` is not
 * among them: `MONKEY` and `TURKEY` end with it too, so a compound with `KEY` needs a known first part.
 */
const SECRET_ENDINGS = ['TOKEN', 'SECRET', 'PASSWORD', 'PASSWD', 'PASSPHRASE', 'CREDENTIAL', 'COOKIE'];

/** First parts that make a compound with `KEY` a credential (`APIKEY`, `ACCESSKEY`, `PRIVATEKEY`). */
const KEY_PREFIXES = [
  'API',
  'ACCESS',
  'SECRET',
  'PRIVATE',
  'SIGNING',
  'ENCRYPTION',
  'MASTER',
  'LICENSE',
  'AUTH',
  'CLIENT',
  'APP',
  'SERVICE',
  'PASS',
  'SSH',
  'GPG',
  'PGP',
  'WEBHOOK',
  'SESSION',
  'ACCOUNT',
  'SHARED',
];

/**
 * Last words that say the variable is *about* a credential, not one: where it lives (`KEY_FILE`,
 * `SSH_AUTH_SOCK`), who uses it (`AUTH_USER`), how long it lasts (`SESSION_TIMEOUT`). A URL is
 * checked by value instead (see {@link secretsInValue}), so `DATABASE_URL` with a password counts.
 */
const ABOUT_WORDS = new Set([
  'FILE',
  'PATH',
  'DIR',
  'SOCK',
  'SOCKET',
  'URL',
  'URI',
  'HOST',
  'PORT',
  'USER',
  'USERNAME',
  'NAME',
  'TYPE',
  'MODE',
  'TTL',
  'TIMEOUT',
  'EXPIRY',
  'AGE',
  'INTERVAL',
  'DURATION',
  'COUNT',
  'LIMIT',
  'LEVEL',
  'VERSION',
  'REGION',
  'ENDPOINT',
  'PREFIX',
  'LENGTH',
  'SIZE',
  'ENABLED',
  'DISABLED',
  'REQUIRED',
]);

/** The words of a variable name: split at `_`, `-`, `.`, lower-to-upper case changes and digits. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .split(/[^A-Za-z]+/)
    .filter((word) => word !== '')
    .map((word) => word.toUpperCase());
}

/** A word without a plural `S` (`SECRETS`, `PASSWORDS`), if the rest is a word we know. */
function singular(word: string, known: (candidate: string) => boolean): boolean {
  return known(word) || (word.endsWith('S') && known(word.slice(0, -1)));
}

function isCredentialWord(word: string, alone: boolean): boolean {
  return singular(word, (candidate) => {
    if (candidate === 'PWD') return !alone;
    if (SECRET_WORDS.has(candidate)) return true;
    if (SECRET_ENDINGS.some((ending) => candidate.endsWith(ending))) return true;
    return (
      candidate.endsWith('KEY') && KEY_PREFIXES.some((prefix) => candidate.slice(0, -3).endsWith(prefix))
    );
  });
}

/**
 * Whether an environment variable's name says it holds a credential: one of its words is a credential
 * word (`API_KEY2`, `SECRETS_X`, `DB_PASSWORDS`, `OPENAI_APIKEY_PROD`, `AUTHORIZATION`, `X_AUTH_TOKEN`,
 * `PRIVATE_KEY_PEM`, `SESSION`, `SENTRY_DSN`), and its last word does not say it is only about one
 * (`KEY_FILE`, `SSH_AUTH_SOCK`). Words are whole: `KEYBOARD`, `MONKEY`, `AUTHOR`, `PASSAGE` are not.
 */
export function isSecretName(name: string): boolean {
  // The desktop's session descriptors (`XDG_SESSION_TYPE=wayland`, `DESKTOP_SESSION=ubuntu`) are not credentials.
  if (/^XDG_/i.test(name) || /^DESKTOP_SESSION$/i.test(name)) return false;
  const words = nameWords(name);
  const last = words.at(-1);
  if (last === undefined || ABOUT_WORDS.has(last)) return false;
  return words.some((word) => isCredentialWord(word, words.length === 1));
}

/** The password of a URL with credentials, as written: `postgres://app:PASSWORD@db/app`. */
const URL_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:([^\s/?#@]+)@/gi;

/** `password=…`, `pwd=…`, `AccountKey=…` in a connection string (`host=db password=x`, `…;Pwd=x;`). */
const CONNECTION_STRING_SECRET =
  /(?:^|[\s;&?])(?:password|passwd|pwd|secret|accountkey|sharedaccesskey|apikey|api_key|token)=("[^"]*"|'[^']*'|[^\s;&]+)/gi;

/**
 * Credentials inside a value whatever the variable's name: the password of a URL
 * (`postgres://app:pw@db/app`, also percent-decoded) and `password=` parts of connection strings.
 */
export function secretsInValue(value: string): string[] {
  const found: string[] = [];
  for (const match of value.matchAll(URL_PASSWORD)) {
    const password = match[1]!;
    found.push(password);
    try {
      found.push(decodeURIComponent(password));
    } catch {
      // A password that is not valid percent-encoding is kept as written.
    }
  }
  for (const match of value.matchAll(CONNECTION_STRING_SECRET)) {
    const secret = match[1]!.replace(/^(["'])(.*)\1$/, '$2');
    if (secret !== '') found.push(secret);
  }
  return found;
}
