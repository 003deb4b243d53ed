import { describe, expect, it } from 'vitest';
import {
  decodeTenantRecord,
  defaultTenantView,
  DEFAULT_MAX_FAIRNESS_WEIGHT,
  DEFAULT_TENANT_WEIGHT,
} from './tenant-record.ts';

describe('tenant records', () => {
  it('show the defaults for a tenant with no record', () => {
    expect(decodeTenantRecord('acme', {})).toEqual(defaultTenantView('acme'));
    expect(defaultTenantView('acme')).toEqual({
      tenant: 'acme',
      weight: DEFAULT_TENANT_WEIGHT,
      max_queued: 0,
      max_inflight: 0,
      max_fairness_weight: DEFAULT_MAX_FAIRNESS_WEIGHT,
      updated_at: 0,
    });
  });

  it('read the fields of a hash', () => {
    expect(
      decodeTenantRecord('acme', {
        weight: '2.5',
        max_queued: '100',
        max_inflight: '8',
        max_fairness_weight: '4',
        updated_at: '1700000000000',
      }),
    ).toEqual({
      tenant: 'acme',
      weight: 2.5,
      max_queued: 100,
      max_inflight: 8,
      max_fairness_weight: 4,
      updated_at: 1700000000000,
    });
  });

  it('keep the default of a field that is out of range or not a number', () => {
    const view = decodeTenantRecord('acme', {
      weight: '0',
      max_queued: '-1',
      max_inflight: 'x',
      max_fairness_weight: '',
    });
    expect(view).toEqual(defaultTenantView('acme'));
  });
});
