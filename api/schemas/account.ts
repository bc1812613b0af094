import { z } from 'zod';
import { timestamp } from './common';

export const accountSchema = z.object({ id: z.uuid(), name: z.string(), balance: z.int().min(0).describe('Units; never below zero') }).meta({ id: 'Account' });

export const transactionSchema = z
  .object({
    id: z.uuid(),
    amount: z.int().describe('Positive for credits, negative for charges'),
    reason: z.string(),
    resourceId: z.uuid().nullable(),
    balanceAfter: z.int().min(0),
    createdAt: timestamp,
  })
  .meta({ id: 'Transaction' });
