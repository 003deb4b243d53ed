import { describe, expect, it } from 'vitest';
import { TenantScope } from './tenant-scope.ts';

const caller = new TenantScope('acme', false);
const operator = new TenantScope('default', true);
const acmeOperator = new TenantScope('acme', true);
const defaultCaller = new TenantScope('default', false);

describe('TenantScope', () => {
  it('a bare name is the requester’s own tenant’s', () => {
    expect(caller.resolve('order-1')).toBe('acme/order-1');
    expect(defaultCaller.resolve('order-1')).toBe('order-1');
    expect(operator.resolve('order-1')).toBe('order-1');
  });

  it('<tenant>/<id> names another tenant’s for operators only, and nothing for others', () => {
    expect(caller.resolve('globex/order-1')).toBeUndefined();
    expect(caller.resolve('acme/order-1')).toBe('acme/order-1');
    expect(operator.resolve('globex/order-1')).toBe('globex/order-1');
    expect(defaultCaller.resolve('acme/order-1')).toBeUndefined();
  });

  it('default/<id> is the default tenant’s bare id written out', () => {
    expect(acmeOperator.resolve('default/order-1')).toBe('order-1');
    expect(caller.resolve('default/order-1')).toBeUndefined();
    expect(defaultCaller.resolve('default/order-1')).toBe('order-1');
    expect(operator.resolve('default/a/b')).toBeUndefined();
  });

  it('shows the requester’s own ids bare and others’ with their tenant', () => {
    expect(caller.show('acme/order-1')).toBe('order-1');
    expect(operator.show('acme/order-1')).toBe('acme/order-1');
    expect(operator.show('order-1')).toBe('order-1');
    expect(acmeOperator.show('order-1')).toBe('default/order-1');
    // What is shown resolves back to the same id.
    for (const scope of [caller, operator, acmeOperator])
      for (const id of ['acme/x', 'globex/y', 'z'])
        if (scope.sees(id)) expect(scope.resolve(scope.show(id))).toBe(id);
  });
});
