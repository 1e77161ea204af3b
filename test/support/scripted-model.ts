// The scripted Responses API server ships with Keel (src/testing) so users can test their own tools
// and the demo can run without a model; tests import it from here as before.
export * from '../../src/testing/scripted-model.js';
