/**
 * A promise kept in a variable must be awaited or given a rejection handler before its function
 * suspends on anything else. `const a = f(); const b = g(); await a;` looks harmless, but if `b`
 * rejects while the function waits for `a`, Node sees a rejection nobody handles and reports it
 * (vitest fails the run, a plain process may exit). `no-floating-promises` cannot see this: the
 * promise is not floating, it is only handled too late. This rule uses the type checker to know which
 * variables hold promises (or arrays of them), then compares, inside one function, where each is first
 * handled with where the function next suspends (`await`, `for await`, `yield`). The same mistake in
 * other shapes is reported too: several promises created together for a loop that awaits them one by
 * one, a promise only a later callback awaits, and one stored in an object or a collection.
 * To keep false alarms rare, handing a promise to any function counts as handling it.
 */

/** Wrappers that change a node's type or syntax but not the value it evaluates to. */
const TRANSPARENT = new Set([
  'TSAsExpression',
  'TSNonNullExpression',
  'TSSatisfiesExpression',
  'TSTypeAssertion',
  'ChainExpression',
]);

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** The expression under any transparent wrappers. */
function unwrap(node) {
  while (TRANSPARENT.has(node.type)) node = node.expression;
  return node;
}

/** Whether a type (or one member of a union) has a callable `then`. */
function isThenable(checker, type, tsNode) {
  const parts = type.isUnion() ? type.types : [type];
  return parts.some((part) => {
    const then = part.getProperty('then');
    return (
      then !== undefined && checker.getTypeOfSymbolAtLocation(then, tsNode).getCallSignatures().length > 0
    );
  });
}

/** Whether a type holds promises: a thenable, or an array or tuple of thenables. */
function holdsPromises(checker, type, tsNode) {
  if (isThenable(checker, type, tsNode)) return 'promise';
  if (checker.isArrayType(type) || checker.isTupleType(type)) {
    const elements = checker.getTypeArguments(type);
    if (elements.some((element) => isThenable(checker, element, tsNode))) return 'array';
  }
  return undefined;
}

/**
 * `new Promise((resolve) => …)`: an executor that never receives `reject` rejects only if it throws,
 * which the small executors that wait for an event or a timer do not. They are the common way to wait
 * for something, so they are left alone.
 */
function cannotReject(init) {
  if (init.type !== 'NewExpression' || init.callee.type !== 'Identifier' || init.callee.name !== 'Promise')
    return false;
  const executor = init.arguments[0];
  return executor !== undefined && FUNCTIONS.has(executor.type) && executor.params.length < 2;
}

/** `p.catch(…)` and `p.then(…, onRejected)`: the promise they make rejects only if the handler throws. */
function isHandlerCall(node) {
  if (node.type !== 'CallExpression') return false;
  const callee = unwrap(node.callee);
  if (callee.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier')
    return false;
  return callee.property.name === 'catch' || (callee.property.name === 'then' && node.arguments.length >= 2);
}

/** Collection methods that keep their argument for someone else to read later. */
const STORING_METHODS = new Set(['push', 'unshift', 'add', 'set']);

/**
 * Whether evaluating `node` (a reference to a tracked variable, or an expression derived from it)
 * hands the promise to something that handles its rejection: an `await`, a `return`, a `.catch`,
 * `.then(_, onRejected)`, any function it is passed to (which then owns it, as `Promise.all` and
 * `expect(p).rejects` do), or a place it escapes to (another variable, a property). `.then(f)` and
 * `.finally(f)` make a new promise that rejects in turn, so they handle only if that one is handled.
 * `void p`, comparisons and plain statements do not.
 */
function handles(node, kind) {
  const parent = node.parent;
  switch (parent.type) {
    case 'AwaitExpression':
    case 'ReturnStatement':
    case 'YieldExpression':
    case 'Property':
    case 'PropertyDefinition':
      return true;
    case 'ArrowFunctionExpression':
      return parent.body === node;
    case 'VariableDeclarator':
      return parent.init === node;
    case 'AssignmentExpression':
      return parent.right === node;
    case 'CallExpression':
    case 'NewExpression':
      return parent.callee !== node;
    case 'ConditionalExpression':
      return parent.test !== node && handles(parent, kind);
    case 'SequenceExpression':
      return parent.expressions.at(-1) === node && handles(parent, kind);
    case 'LogicalExpression':
    case 'ArrayExpression':
    case 'SpreadElement':
      return handles(parent, kind);
    case 'MemberExpression': {
      if (parent.object !== node) return false;
      // An array of promises used through its methods (`map`, `forEach`, indexing) is not followed further.
      if (kind === 'array') return true;
      const call = parent.parent;
      if (call.type !== 'CallExpression' || call.callee !== parent || parent.computed) return false;
      const method = parent.property.name;
      if (method === 'catch') return true;
      if (method === 'then') return call.arguments.length >= 2 || handles(call, kind);
      if (method === 'finally') return handles(call, kind);
      return false;
    }
    default:
      return TRANSPARENT.has(parent.type) && handles(parent, kind);
  }
}

/** @type {import('eslint').Rule.RuleModule} */
export default {
  meta: {
    type: 'problem',
    docs: {
      description:
        'Require a promise held in a variable to be awaited or handled before its function awaits anything else',
    },
    schema: [],
    messages: {
      handledTooLate:
        "'{{name}}' holds {{what}} not yet awaited or handled when this function suspends at line {{line}}; " +
        'if it rejects meanwhile, that is an unhandled rejection. Await it first, combine the promises ' +
        'with Promise.all/allSettled, or attach a rejection handler (.catch) where it is created.',
      handledOnlyLater:
        "'{{name}}' holds {{what}} that only a function running later awaits or handles; until then " +
        'a rejection is unhandled. Attach a rejection handler where it is created, or await it here.',
      storedAway:
        'This promise is kept in {{where}} without a rejection handler: whoever reads it may await ' +
        'something else first, and a rejection meanwhile is unhandled. Attach a handler where it is ' +
        'created, or restructure so that it is awaited where it is made (e.g. Worker.runUntil).',
      createdTogether:
        'These promises are all created before the loop awaits the first; one that rejects meanwhile is ' +
        'an unhandled rejection. Create each inside the loop (iterate over functions) or use Promise.allSettled.',
    },
  },
  create(context) {
    const services = context.sourceCode.parserServices;
    if (!services?.program || !services.esTreeNodeToTSNodeMap) {
      throw new Error('no-unawaited-promise-variable needs type information (parserOptions.project)');
    }
    const checker = services.program.getTypeChecker();
    const typeOf = (node) => {
      const tsNode = services.esTreeNodeToTSNodeMap.get(node);
      return { type: checker.getTypeAtLocation(tsNode), tsNode };
    };
    /** One entry per function being walked (the module is one too: top-level await). */
    const frames = [];
    const enter = () => frames.push({ suspensions: [], candidates: [], loops: [] });
    const frame = () => frames.at(-1);

    /** Where the function suspends: after an `await`'s operand, at each step of a `for await`, at a `yield`. */
    const suspendsAt = (at, node) => frame().suspensions.push({ at, line: node.loc.start.line });

    /** A call that makes a promise which may reject with nobody listening yet. */
    const makesRejectable = (node) => {
      const value = unwrap(node);
      if (value.type !== 'CallExpression' && value.type !== 'NewExpression') return false;
      if (cannotReject(value) || isHandlerCall(value)) return false;
      const { type, tsNode } = typeOf(node);
      return isThenable(checker, type, tsNode);
    };

    /** A variable that gets a promise (or an array of them) from a call at `created`. */
    const track = (identifier, init, created, writeNode) => {
      const value = unwrap(init);
      if (value.type === 'ArrayExpression') {
        // An empty list filled later is covered where the promises are pushed.
        if (!value.elements.some((element) => element !== null && makesRejectable(element))) return;
        const { type, tsNode } = typeOf(identifier);
        if (holdsPromises(checker, type, tsNode) !== 'array') return;
        frame().candidates.push({ identifier, created, writeNode, kind: 'array' });
      } else if (value.type === 'CallExpression' || value.type === 'NewExpression') {
        if (cannotReject(value) || isHandlerCall(value)) return;
        const { type, tsNode } = typeOf(identifier);
        const kind = holdsPromises(checker, type, tsNode);
        if (kind !== undefined) frame().candidates.push({ identifier, created, writeNode, kind });
      }
    };

    const leave = (functionNode) => {
      const { suspensions, candidates, loops } = frames.pop();
      for (const { identifier, created, writeNode, kind } of candidates) {
        const variable = context.sourceCode
          .getScope(identifier)
          .references.find((reference) => reference.identifier === identifier)?.resolved;
        const readsAfter = (variable?.references ?? [])
          .filter((reference) => reference.isRead() && reference.identifier.range[0] >= created)
          .filter((reference) => reference.identifier !== writeNode);
        // A use inside a nested function runs later, on its own schedule (if ever): it does not handle now.
        const own = (reference) => reference.from.variableScope.block === functionNode;
        const handledAt = readsAfter
          .filter((reference) => own(reference) && handles(reference.identifier, kind))
          .map((reference) => reference.identifier.range[0])
          .sort((a, b) => a - b)[0];
        const suspension = suspensions
          .filter(({ at }) => at > created && (handledAt === undefined || at <= handledAt))
          .sort((a, b) => a.at - b.at)[0];
        if (suspension === undefined && handledAt === undefined && readsAfter.some((r) => !own(r))) {
          context.report({
            node: identifier,
            messageId: 'handledOnlyLater',
            data: { name: identifier.name, what: kind === 'array' ? 'promises' : 'a promise' },
          });
          continue;
        }
        if (suspension === undefined) continue;
        context.report({
          node: identifier,
          messageId: 'handledTooLate',
          data: {
            name: identifier.name,
            what: kind === 'array' ? 'promises' : 'a promise',
            line: String(suspension.line),
          },
        });
      }
      for (const loop of loops) {
        const suspendsInside =
          loop.await || suspensions.some(({ at }) => at > loop.right.range[1] && at <= loop.range[1]);
        if (suspendsInside) context.report({ node: loop.right, messageId: 'createdTogether' });
      }
    };

    return {
      Program: enter,
      'Program:exit': leave,
      ':function': enter,
      ':function:exit': leave,
      'AwaitExpression:exit': (node) => suspendsAt(node.range[1], node),
      'YieldExpression:exit': (node) => suspendsAt(node.range[1], node),
      ForOfStatement(node) {
        if (node.await) suspendsAt(node.right.range[1], node);
        const right = unwrap(node.right);
        if (right.type !== 'ArrayExpression') return;
        const promises = right.elements.filter(
          (element) => element !== null && element.type !== 'SpreadElement' && makesRejectable(element),
        );
        if (promises.length >= 2) frame().loops.push(node);
      },
      VariableDeclarator(node) {
        if (node.id.type === 'Identifier' && node.init)
          track(node.id, node.init, node.init.range[1], node.id);
      },
      Property(node) {
        // Handed straight to a function, the object is that function's to handle (`start({ done: p })`).
        const object = node.parent;
        if (object.type !== 'ObjectExpression' || object.parent.type === 'CallExpression') return;
        if (makesRejectable(node.value))
          context.report({ node: node.value, messageId: 'storedAway', data: { where: 'an object' } });
      },
      CallExpression(node) {
        const callee = unwrap(node.callee);
        if (callee.type !== 'MemberExpression' || callee.computed || callee.property.type !== 'Identifier')
          return;
        if (!STORING_METHODS.has(callee.property.name)) return;
        for (const argument of node.arguments)
          if (argument.type !== 'SpreadElement' && makesRejectable(argument))
            context.report({ node: argument, messageId: 'storedAway', data: { where: 'a collection' } });
      },
      AssignmentExpression(node) {
        if (node.operator === '=' && node.left.type === 'Identifier')
          track(node.left, node.right, node.right.range[1], node.left);
      },
    };
  },
};
