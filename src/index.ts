// The package's main entry (`import … from 'keel'`): what a worker process needs to host Keel's agent
// runs beside its own code. Workflow code imports `keel/workflow` instead (this module pulls in the
// worker and the `openai` SDK, which must stay out of a workflow bundle); callers import `keel/client`.

// Keel on your worker
export { KeelPlugin } from './plugin/keel-plugin.js';
export { KeelOptions } from './plugin/keel-options.js';
export type { ResolvedKeelOptions } from './plugin/keel-options.js';
export { loadToolsModule, ToolsModule } from './plugin/tools-module.js';

// Agents a worker offers by name
export {
  AgentDefinition,
  AgentDefinitionError,
  agentVersion,
  defineAgent,
  structuredOutput,
} from './agents/index.js';
export type { Agent } from './agents/index.js';

// Tools
export { defineTool, ToolDefinitionError, LOCAL_TOOL_MAX_SECONDS } from './tools/define-tool.js';
export type { Tool, ToolContext, ToolOutput, ToolSpec } from './tools/define-tool.js';
export { ToolError } from './tools/tool-error.js';
export { FileIdempotencyStore, MemoryIdempotencyStore, SideEffectInDoubtError } from './tools/idempotency.js';
export type { IdempotencyRecord, IdempotencyStore } from './tools/idempotency.js';
export { PostgresIdempotencyStore } from './tools/pg-idempotency-store.js';
export type { PostgresIdempotencyStoreOptions } from './tools/pg-idempotency-store.js';
export { ToolRegistry } from './tools/registry.js';
export { Workspace, WorkspaceError, FileTooLargeError } from './tools/workspace.js';
export type { WorkspaceOptions } from './tools/workspace.js';
export {
  createEditFileTool,
  createListDirectoryTool,
  createReadFileTool,
  createSearchFilesTool,
  createWriteFileTool,
  fileTools,
} from './tools/builtin/index.js';
export type { FileTools } from './tools/builtin/index.js';
export type { WorkspaceSource } from './tools/workspace-source.js';
export { createHttpFetchTool } from './tools/builtin/http-fetch.js';
export type { HttpFetchOptions } from './tools/builtin/http-fetch.js';
export { createRunCommandTool } from './tools/builtin/run-command.js';
export type { RunCommandOptions } from './tools/builtin/run-command.js';

// MCP servers' tools
export { McpServerConfig, McpHttpServerConfig, McpStdioServerConfig, McpServers } from './mcp/index.js';

// The worker
export {
  configuredTools,
  createKeelWorker,
  keelOptionsFromConfig,
  runWorker,
  workflowsPath,
} from './worker.js';
export type { KeelWorkerOptions, RunWorkerOptions } from './worker.js';
export { createActivities } from './activities/index.js';
export type { ActivityDependencies, KeelActivities } from './activities/index.js';
export { ACTIVITY_NAMES } from './contract/activity-names.js';
export type { KeelActivityName } from './contract/activity-names.js';
export { createOpenAIClient } from './model/client.js';
export { createSanitizer } from './safety/sanitize.js';
export type { Sanitizer, SanitizerOptions } from './safety/sanitize.js';
export type { Logger } from './logger.js';

// Payload encryption (docs/encryption.md)
export {
  dataConverterFor,
  dataConverterFromEnvironment,
  encodingFailureConverterPath,
} from './data-converter.js';
export { EncryptionCodec } from './codec/encryption-codec.js';
export { CodecError } from './codec/codec-error.js';
export { codecKeysFromEnvironment } from './codec/codec-config.js';
export type { KeyRing } from './codec/key-ring.js';

// Configuration and errors
export { ConfigError, payloadStoreFromEnvironment, workerConfigFromEnvironment } from './config.js';
export { openPayloadStore } from './payload-store/open-payload-store.js';
export type { OpenedPayloadStore } from './payload-store/open-payload-store.js';
export type { PayloadStoreConfig, PayloadStoreLocation } from './payload-store/payload-store-config.js';
export type { WorkerConfig } from './config.js';
export type { ModelConfig, ModelMode } from './model/config.js';
export { ModelError } from './model/model-error.js';

// The contract: run input, result, state and the shapes inside them (zod schemas and their types)
export * from './contract/index.js';
