// ESLint rule `reach/promise-args`: nothing thrown while the promises of a Promise.all, allSettled,
// race or any are being made may leave one already started with no one to handle it.
//
// `Promise.all([tasks.view(id), redis.hget(keys.task(id), 'f')])` starts `view()` first; when
// `keys.task(id)` then throws (an id that is not an id), the combinator is never called, the
// started promise rejects with no handler, and Node ends the process. So, past the first
// promise of an array, and in the callback of `xs.map(cb)` handed to a combinator, each promise is
// made by a call whose callee and arguments are plain values (names, literals, property reads,
// functions, templates and operators over them); anything that calls (a key builder, an
// encoder, a check) is computed into a constant before the combinator. A callback that is
// `async` cannot throw synchronously and is always allowed.

const COMBINATORS = new Set(['all', 'allSettled', 'race', 'any']);

/** True for an expression that evaluates without calling anything the code wrote. */
function plain(node) {
  if (!node) return true;
  switch (node.type) {
    case 'Identifier':
    case 'Literal':
    case 'ThisExpression':
    case 'Super':
    case 'ArrowFunctionExpression':
    case 'FunctionExpression':
      return true;
    case 'TemplateLiteral':
      return node.expressions.every(plain);
    case 'MemberExpression':
      return plain(node.object) && (!node.computed || plain(node.property));
    case 'ChainExpression':
    case 'TSAsExpression':
    case 'TSNonNullExpression':
    case 'TSSatisfiesExpression':
    case 'SpreadElement':
    case 'UnaryExpression':
      return plain(node.expression ?? node.argument);
    case 'BinaryExpression':
    case 'LogicalExpression':
      return plain(node.left) && plain(node.right);
    case 'ConditionalExpression':
      return plain(node.test) && plain(node.consequent) && plain(node.alternate);
    case 'ArrayExpression':
      return node.elements.every(plain);
    case 'ObjectExpression':
      return node.properties.every((p) =>
        p.type === 'SpreadElement' ? plain(p) : (!p.computed || plain(p.key)) && plain(p.value),
      );
    default:
      return false;
  }
}

/**
 * True for an expression that makes a promise without throwing first: plain, or a call (or
 * `new`) of a plain callee — or of a method of such a call, `read().catch(f)` — with plain
 * arguments, or a choice between such.
 */
function safeMaker(node) {
  if (plain(node)) return true;
  switch (node.type) {
    case 'AwaitExpression':
      return false;
    case 'ChainExpression':
    case 'TSAsExpression':
    case 'TSNonNullExpression':
      return safeMaker(node.expression);
    case 'ConditionalExpression':
      return plain(node.test) && safeMaker(node.consequent) && safeMaker(node.alternate);
    case 'CallExpression':
    case 'NewExpression': {
      const callee = node.callee;
      const calleeOk =
        plain(callee) ||
        (callee.type === 'MemberExpression' && !callee.computed && safeMaker(callee.object));
      return calleeOk && node.arguments.every(plain);
    }
    default:
      return false;
  }
}

function isCombinator(node) {
  const callee = node.callee;
  return (
    callee.type === 'MemberExpression' &&
    callee.object.type === 'Identifier' &&
    callee.object.name === 'Promise' &&
    !callee.computed &&
    callee.property.type === 'Identifier' &&
    COMBINATORS.has(callee.property.name)
  );
}

/** True for `xs.map(…)`. */
function isMap(node) {
  return (
    node.type === 'CallExpression' &&
    node.callee.type === 'MemberExpression' &&
    !node.callee.computed &&
    node.callee.property.type === 'Identifier' &&
    node.callee.property.name === 'map'
  );
}

/** The expressions a non-async callback returns, or undefined when it has statements of its own. */
function returned(fn) {
  if (fn.body.type !== 'BlockStatement') return [fn.body];
  const [only] = fn.body.body;
  if (fn.body.body.length === 1 && only.type === 'ReturnStatement' && only.argument)
    return [only.argument];
  return undefined;
}

export const promiseArgs = {
  meta: {
    type: 'problem',
    docs: {
      description:
        'Promises handed to Promise.all/allSettled/race/any are made from values computed before it, so a throw cannot orphan one already started',
    },
    schema: [],
    messages: {
      element:
        "compute this promise's arguments before Promise.{{name}}: a throw while they are computed leaves the promises before it with no handler (a rejection that ends the process)",
      callback:
        'make this callback async, or compute what it calls with before Promise.{{name}}: a throw in it leaves the promises made before it with no handler',
    },
  },
  create(context) {
    // xs.map(cb): cb runs once per element, each call after the first promise started.
    const checkMap = (call, name) => {
      const fn = call.arguments[0];
      if (!fn || (fn.type !== 'ArrowFunctionExpression' && fn.type !== 'FunctionExpression'))
        return;
      if (fn.async) return;
      const out = returned(fn);
      if (!out || !out.every(safeMaker))
        context.report({ node: fn, messageId: 'callback', data: { name } });
    };
    return {
      CallExpression(node) {
        if (!isCombinator(node)) return;
        const name = node.callee.property.name;
        const arg = node.arguments[0];
        if (!arg) return;
        if (arg.type === 'ArrayExpression') {
          arg.elements.forEach((el, i) => {
            if (!el) return;
            // [...xs.map(cb)]: judged as a map handed to the combinator.
            if (el.type === 'SpreadElement' && isMap(el.argument)) {
              checkMap(el.argument, name);
              return;
            }
            if (i > 0 && !safeMaker(el))
              context.report({ node: el, messageId: 'element', data: { name } });
          });
          return;
        }
        if (isMap(arg)) checkMap(arg, name);
      },
    };
  },
};

/** The local plugin eslint.config.mjs registers as `reach`. */
export const reachPlugin = { rules: { 'promise-args': promiseArgs } };
