import { Connection } from '@temporalio/client';
import type { ConnectionOptions } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { Logger } from './logger.js';
import { keelSearchAttributes } from './workflows/search-attributes.js';

// @temporalio/proto is CommonJS with a computed export: take it from the default export under ESM.
const { IndexedValueType } = proto.temporal.api.enums.v1;

/** The server's name for each of the SDK's search attribute types. */
const INDEXED_TYPES = {
  TEXT: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  DOUBLE: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  DATETIME: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
} as const;

/** `temporal operator search-attribute create` lines that register Keel's search attributes. */
export function searchAttributeCommands(namespace: string): string[] {
  const cliType = {
    KEYWORD: 'Keyword',
    INT: 'Int',
    TEXT: 'Text',
    DOUBLE: 'Double',
    BOOL: 'Bool',
    DATETIME: 'Datetime',
    KEYWORD_LIST: 'KeywordList',
  };
  return keelSearchAttributes.map(
    (key) =>
      `temporal operator search-attribute create --namespace ${namespace} --name ${key.name} --type ${cliType[key.type]}`,
  );
}

/**
 * Makes sure the namespace has Keel's search attributes: registers the missing ones where the server
 * allows it (a dev server or a self-hosted cluster with operator rights). Returns whether all are
 * there; when not, runs simply do not set them, and the log says how to register them.
 */
export async function ensureSearchAttributes(
  connection: Pick<Connection, 'operatorService'>,
  namespace: string,
  logger: Logger,
): Promise<boolean> {
  const present = async (): Promise<Map<string, number>> => {
    const response = await connection.operatorService.listSearchAttributes({ namespace });
    return new Map(
      Object.entries(response.customAttributes ?? {}).map(([name, type]) => [name, Number(type)]),
    );
  };
  try {
    const existing = await present();
    const wrongType = keelSearchAttributes.filter(
      (key) => existing.has(key.name) && existing.get(key.name) !== INDEXED_TYPES[key.type],
    );
    if (wrongType.length > 0) {
      logger.warn(
        `Search attribute(s) ${wrongType.map((key) => key.name).join(', ')} exist with another type; runs will not set Keel's search attributes`,
      );
      return false;
    }
    const missing = keelSearchAttributes.filter((key) => !existing.has(key.name));
    if (missing.length === 0) return true;
    try {
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_TYPES[key.type]])),
      });
    } catch (error) {
      // Another worker may have added them at the same moment; only the outcome matters.
      const now = await present();
      if (missing.every((key) => now.get(key.name) === INDEXED_TYPES[key.type])) return true;
      throw error;
    }
    logger.info(
      `Registered search attributes ${missing.map((key) => key.name).join(', ')} in namespace ${namespace}`,
    );
    return true;
  } catch (error) {
    logger.warn(
      `Keel's search attributes are not registered in namespace ${namespace} and could not be added ` +
        `(${(error as Error).message.split('\n')[0]}); runs will not set them. Register them with:\n` +
        searchAttributeCommands(namespace).join('\n'),
    );
    return false;
  }
}

/** {@link ensureSearchAttributes} over a connection of its own, closed afterwards. */
export async function registerSearchAttributes(
  connectionOptions: ConnectionOptions,
  namespace: string,
  logger: Logger,
): Promise<boolean> {
  const connection = await Connection.connect(connectionOptions);
  try {
    return await ensureSearchAttributes(connection, namespace, logger);
  } finally {
    await connection.close();
  }
}
