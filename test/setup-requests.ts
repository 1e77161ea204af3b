import { afterEach } from 'vitest';
import { takeSchemaViolations } from './support/scripted-model.js';

// Every request a test sends to the scripted model must be valid under OpenAI's published schema,
// whether or not the test looks at the requests: an invalid one fails the test that sent it.
afterEach(() => {
  const violations = takeSchemaViolations();
  if (violations.length > 0)
    throw new Error(`Requests to the scripted model were invalid:\n${violations.join('\n')}`);
});
