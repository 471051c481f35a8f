// Type-checks a few uses of the TypeScript types that openapi-typescript
// generates from the served OpenAPI document (.ci/openapi/check.sh writes
// api.d.ts beside this file). `tsc --noEmit` fails when an operationId,
// a schema or a field used here disappears or changes its type.
import type { components, operations, paths } from "./api";

type Vendor = components["schemas"]["Vendor"];
type ApiError = components["schemas"]["Error"];
type FindingCreate = components["schemas"]["FindingCreate"];
type CreateVendorBody = operations["createVendor"]["requestBody"]["content"]["application/json"];
type VendorPage = operations["listVendors"]["responses"][200]["content"]["application/json"];
type ValidationError = operations["createVendor"]["responses"][400]["content"]["application/json"];

// Operations are keyed by operationId.
export const operationIds: Array<keyof operations> = [
  "listVendors",
  "getVendor",
  "createVendor",
  "archiveVendor",
  "listDevices",
  "createFinding",
  "uploadControlEvidence",
];

export const newVendor: CreateVendorBody = {
  name: "Acme Cloud GmbH",
  country: "DE",
  criticality: "critical",
  processesPersonalData: true,
  subProcessors: [{ name: "Example Datacenter AG", country: "DE", purpose: "hosting" }],
};

// @ts-expect-error criticality takes only the documented values.
export const badCriticality: CreateVendorBody = { name: "x", criticality: "urgent" };

export const shapeA: FindingCreate = {
  content: "MFA is not enforced for administrator accounts.",
  taskId: "tsk_01JABCDEFGHJKMNPQRSTVWXYZ0",
  type: "iso27001",
  findingClass: "minor_nonconformity",
};

export const shapeB: FindingCreate = {
  title: "CVE-2026-0001 on host-a",
  source: "scanner",
  cvss: 9.8,
  linkedControlIds: ["ctl_01JABCDEFGHJKMNPQRSTVWXYZ0"],
};

export function vendorIds(page: VendorPage): string[] {
  const ids: string[] = [];
  for (const v of page.data satisfies Vendor[]) {
    if (v.id !== undefined) ids.push(v.id);
  }
  return ids;
}

export function failingField(e: ValidationError): string | undefined {
  const code: ApiError["error"]["code"] = e.error.code;
  return code === "validation_error" ? e.error.details.field : undefined;
}

export type VendorPath = paths["/v1/vendors/{id}"]["get"]["parameters"]["path"]["id"];
