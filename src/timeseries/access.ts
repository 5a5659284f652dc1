// D14: who may read or write which dataset. The headers name the service,
// the project and the dataset; the principal must hold the scope and the
// project; a dataset of another project does not exist for the caller.
import type { HandlerContext } from "@connectrpc/connect";
import { hasProject, hasScope, principalOf } from "../auth/principal.js";
import { invalidField, permissionDenied, ViolationList } from "../transport/errors.js";

const READ_SCOPES = ["platform_timeseries_read", "platform_timeseries_readwrite"];
const WRITE_SCOPE = "platform_timeseries_readwrite";
const PROJECT_ID = /^[A-Za-z0-9._-]{1,128}$/; // D23
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type Access = "read" | "write";

/** Checks D14 for a call; `datasetId` is the dataset of the path, if the route has one. Returns the project. */
export function authorize(ctx: HandlerContext, access: Access, datasetId?: string): string {
  const principal = principalOf(ctx);
  if (access === "write" ? !hasScope(principal, WRITE_SCOPE) : !hasScope(principal, ...READ_SCOPES)) {
    throw permissionDenied(`this call needs scope ${access === "write" ? WRITE_SCOPE : READ_SCOPES.join(" or ")}`);
  }
  const v = new ViolationList();
  const service = ctx.requestHeader.get("svc-service-id");
  if (service !== "timeseries") v.add("svc-service-id", 'must be "timeseries"');
  const project = ctx.requestHeader.get("svc-project-id") ?? "";
  if (!PROJECT_ID.test(project)) v.add("svc-project-id", "is required: 1 to 128 characters of A-Z a-z 0-9 . _ -");
  if (datasetId !== undefined) {
    const header = ctx.requestHeader.get("svc-dataset-id");
    if (header === null || header.toLowerCase() !== datasetId.toLowerCase()) v.add("svc-dataset-id", "must equal the dataset id of the path");
  }
  v.throwIfAny();
  if (!hasProject(principal, project)) throw permissionDenied(`client ${principal.clientId} has no access to project ${project}`);
  return project;
}

/** D23: a GUID in any case, returned lower case; anything else is a 400 naming the field. */
export function guid(value: string, field: string): string {
  if (!GUID.test(value)) throw invalidField(field, "must be a GUID");
  return value.toLowerCase();
}

export function isGuid(value: string): boolean {
  return GUID.test(value);
}
