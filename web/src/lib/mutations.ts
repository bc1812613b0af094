import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';

/** An Idempotency-Key for one intent (a dialog's submit): a retried request is answered, never applied twice. */
export function useIntentKey(): string {
  const [key] = useState(() => crypto.randomUUID());
  return key;
}

/**
 * A write: runs `fn`, then refreshes what it changed (`invalidates`, by key prefix) and says so in a
 * notification. Its error stays on the mutation for the form to show in an alert.
 */
export function useWrite<TInput, TResult>(
  fn: (input: TInput) => Promise<TResult>,
  options: { invalidates?: QueryKey[]; success?: string | ((result: TResult) => string); onSuccess?: (result: TResult) => void } = {},
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: async (result) => {
      await Promise.all((options.invalidates ?? []).map((queryKey) => queryClient.invalidateQueries({ queryKey })));
      const message = typeof options.success === 'function' ? options.success(result) : options.success;
      if (message) notifications.show({ message, color: 'teal' });
      options.onSuccess?.(result);
    },
  });
}
