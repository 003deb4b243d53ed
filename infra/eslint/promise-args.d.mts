import type { ESLint, Rule } from 'eslint';

export declare const promiseArgs: Rule.RuleModule;
export declare const reachPlugin: ESLint.Plugin;
