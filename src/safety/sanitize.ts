/** Names of environment variables whose values are treated as secrets. */
const SECRET_NAME =
  /(^|_)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH)(_|$)|(KEY|TOKEN|SECRET|PASSWORD|PASSWD)$/i;

/** Shapes of well-known credentials, redacted from error messages even when nobody named them. */
const SECRET_SHAPES: RegExp[] = [
  /\bsk-[A-Za-z0-9_*.-]{6,}/g, // OpenAI-style keys, including the masked forms in 401 messages
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
];

const REDACTED = '[redacted]';

/** Values of environment variables whose names look like they hold credentials. */
export function secretsFromEnvironment(environment: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(environment)
    .filter(([name, value]) => SECRET_NAME.test(name) && value !== undefined && value.length >= 8)
    .map(([, value]) => value as string);
}

/** Options for {@link createSanitizer}. */
export interface SanitizerOptions {
  /** Exact values to redact wherever they appear. */
  secrets?: readonly string[];
  /** Absolute paths to hide, each replaced by its label (the workspace root by `.`, say). */
  paths?: readonly { path: string; label: string }[];
  /** Longest message returned by {@link Sanitizer.message}; the rest is cut with a marker. */
  maxMessageLength?: number;
}

/** Cleans text before it leaves the worker for the model or for workflow history. */
export interface Sanitizer {
  /** Removes the exact secret values; for tool output, whose other content is the model's business. */
  output(text: string): string;
  /** For error messages: secrets, credential shapes and worker paths removed, length bounded. */
  message(text: string): string;
}

/** Builds a {@link Sanitizer}. */
export function createSanitizer(options: SanitizerOptions = {}): Sanitizer {
  const secrets = [...new Set(options.secrets ?? [])]
    .filter((secret) => secret.length >= 4)
    .sort((a, b) => b.length - a.length);
  const paths = [...(options.paths ?? [])]
    .filter((entry) => entry.path.length > 1)
    .sort((a, b) => b.path.length - a.path.length);
  const maxLength = options.maxMessageLength ?? 2_000;
  const output = (text: string): string => {
    let result = text;
    for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    return result;
  };
  return {
    output,
    message(text) {
      let result = output(text);
      for (const shape of SECRET_SHAPES) result = result.replace(shape, REDACTED);
      for (const { path, label } of paths) {
        result = result.split(path + '/').join(label === '' ? '' : label + '/');
        result = result.split(path).join(label);
      }
      return result.length > maxLength ? result.slice(0, maxLength) + '… [truncated]' : result;
    },
  };
}
