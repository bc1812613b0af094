import { useSearchParams } from 'react-router';

/**
 * A list's create form as part of its URL (`?new`): the form is a link a person can share or bookmark, and
 * Back closes it. The form opens for any role that follows the link; the API decides (a role that may not
 * create gets its 403, shown in the form).
 */
export function useCreateParam() {
  const [params, setParams] = useSearchParams();
  const set = (open: boolean) =>
    setParams((current) => {
      const next = new URLSearchParams(current);
      if (open) next.set('new', '');
      else next.delete('new');
      return next;
    });
  return { opened: params.has('new'), open: () => set(true), close: () => set(false) };
}
