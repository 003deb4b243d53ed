// The rule that keeps Lua scripts behind their definitions: a script's command (`reachXxx`) is
// called only by `defineScript`'s runner (packages/service-kit/src/script-def.ts), which lays out
// keys and arguments by name. A positional `redis.reachRetry(k1, k2, 3, …)` anywhere else is an
// error.

/** `no-restricted-syntax` options that refuse a direct call of a script's command. */
export const scriptCallRestriction = {
  selector: "CallExpression[callee.type='MemberExpression'][callee.property.name=/^reach[A-Z]/]",
  message:
    'Call a Lua script through its definition (defineScript in packages/service-kit): keys and arguments by name, the reply decoded beside it.',
};
