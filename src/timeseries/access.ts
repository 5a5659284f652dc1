// D14: who may read or write which dataset. The headers name the service,
// the project and the dataset; the principal must hold the scope and the
// project; a dataset of another project does not exist for the caller.
import type { HandlerContext } from "@connectrpc/connect";
import { SCOPES as GRANTS, hasProject, hasScope, principalOf } from "../auth/principal.js";
import { permissionDenied, ViolationList } from "../kernel/errors.js";
import { OPAQUE_ID_RULE, isOpaqueId } from "../kernel/ids.js";

export type Access = "read" | "write";

/** Any one of these scopes allows the access. */
const SCOPES: Record<Access, string[]> = {
  read: [GRANTS.timeSeriesRead, GRANTS.timeSeriesReadWrite],
  write: [GRANTS.timeSeriesReadWrite],
};

/** Checks D14 for a call; `datasetId` is the dataset of the path, if the route has one. Returns the project. */
export function authorize(ctx: HandlerContext, access: Access, datasetId?: string): string {
  const principal = principalOf(ctx);
  if (!hasScope(principal, ...SCOPES[access])) throw permissionDenied(`this call needs scope ${SCOPES[access].join(" or ")}`);
  const v = new ViolationList();
  const service = ctx.requestHeader.get("svc-service-id");
  if (service !== "timeseries") v.add("svc-service-id", 'must be "timeseries"');
  const project = ctx.requestHeader.get("svc-project-id") ?? "";
  if (!isOpaqueId(project)) v.add("svc-project-id", `is required: ${OPAQUE_ID_RULE}`);
  if (datasetId !== undefined) {
    const header = ctx.requestHeader.get("svc-dataset-id");
    if (header?.toLowerCase() !== datasetId.toLowerCase()) v.add("svc-dataset-id", "must equal the dataset id of the path");
  }
  v.throwIfAny();
  if (!hasProject(principal, project)) throw permissionDenied(`client ${principal.clientId} has no access to project ${project}`);
  return project;
}
