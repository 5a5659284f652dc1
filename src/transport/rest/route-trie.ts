// Matches request paths against parsed templates. Literal children are tried
// before "*", and "*" before "**", backtracking until a node has a route for
// the request method; a path that matches only with other methods is a 405.
// HEAD takes GET's route (RFC 9110, 9.3.2): the transport sends its head alone.
import type { PathTemplate } from "./path-template.js";

interface Node<T> {
  literals: Map<string, Node<T>>;
  any?: Node<T>;
  /** Routes of templates ending in "**", by method. */
  rest?: Map<string, T>;
  routes?: Map<string, T>;
}

export type MatchResult<T> =
  { kind: "found"; route: T; segments: string[] } | { kind: "method-not-allowed"; allowed: string[] } | { kind: "not-found" };

export class DuplicateRouteError extends Error {}

export class RouteTrie<T> {
  private readonly root: Node<T> = newNode();
  /** Every route, in the order added. */
  readonly all: T[] = [];

  add(method: string, template: PathTemplate, route: T): void {
    let node = this.root;
    for (const seg of template.segments) {
      if (seg.kind === "literal") {
        let next = node.literals.get(seg.value);
        if (!next) node.literals.set(seg.value, (next = newNode()));
        node = next;
      } else if (seg.kind === "any") {
        node = node.any ??= newNode();
      } else {
        insert((node.rest ??= new Map<string, T>()), method, template, route);
        return;
      }
    }
    insert((node.routes ??= new Map<string, T>()), method, template, route);
    this.all.push(route);
  }

  /** `segments` are the raw (still percent-encoded) path segments. */
  match(method: string, segments: readonly string[]): MatchResult<T> {
    const allowed = new Set<string>();
    const found = search(this.root, segments, 0, method === "HEAD" ? "GET" : method, allowed);
    if (found) return { kind: "found", route: found, segments: segments as string[] };
    if (allowed.size > 0) return { kind: "method-not-allowed", allowed: [...allowed].sort() };
    return { kind: "not-found" };
  }
}

function newNode<T>(): Node<T> {
  return { literals: new Map() };
}

function insert<T>(routes: Map<string, T>, method: string, template: PathTemplate, route: T): void {
  if (routes.has(method)) throw new DuplicateRouteError(`${method} ${template.source} is bound twice`);
  routes.set(method, route);
}

function search<T>(node: Node<T>, segs: readonly string[], i: number, method: string, allowed: Set<string>): T | undefined {
  if (i === segs.length) {
    const hit = pick(node.routes, method, allowed);
    if (hit !== undefined) return hit;
  } else {
    const lit = node.literals.get(segs[i]);
    if (lit) {
      const hit = search(lit, segs, i + 1, method, allowed);
      if (hit !== undefined) return hit;
    }
    if (node.any) {
      const hit = search(node.any, segs, i + 1, method, allowed);
      if (hit !== undefined) return hit;
    }
  }
  // "**" matches zero or more remaining segments.
  return pick(node.rest, method, allowed);
}

function pick<T>(routes: Map<string, T> | undefined, method: string, allowed: Set<string>): T | undefined {
  if (!routes) return undefined;
  const hit = routes.get(method);
  if (hit !== undefined) return hit;
  for (const m of routes.keys()) allowed.add(m);
  return undefined;
}
