/**
 * The value at a dotted path (`a.b.0.c`; a numeric segment indexes an array), or undefined when any
 * segment is missing (JSON has no undefined, so that means "not found"). Own properties only. Shared
 * by eventFilter keys (lib/event-filter.ts) and the custom tool's templates and responseMapping, so a
 * path reads a tool's response the way a filter reads the run's output.
 */
export function valueAtPath(root: unknown, path: string): unknown {
  if (path === '') return root;
  let node: unknown = root;
  for (const segment of path.split('.')) {
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment) || Number(segment) >= node.length) return undefined;
      node = node[Number(segment)];
    } else if (node !== null && typeof node === 'object' && Object.hasOwn(node, segment)) {
      node = (node as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return node;
}
