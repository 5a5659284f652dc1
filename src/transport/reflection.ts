// gRPC server reflection (D42), grpc.reflection.v1 and v1alpha, so that
// buf curl, grpcurl and Postman call Meridian without our proto files. The
// answers are the FileDescriptorProtos the services were generated from,
// each with the files it imports, and the file of the types an error's
// details hold (google.rpc.ErrorInfo, BadRequest: D59), so that a client
// prints a reason rather than base64. Public, like the OpenAPI document: the API
// is no secret, its data is.
import {
  create,
  toBinary,
  type DescExtension,
  type DescFile,
  type DescMessage,
  type DescService,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import * as v1 from "../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import type { ServiceRegistry } from "./service-registry.js";
import { file_google_rpc_error_details } from "../gen/google/rpc/error_details_pb.js";

export const REFLECTION_SERVICES = [v1.ServerReflection, v1alpha.ServerReflection] as const;

/** What a symbol or file name leads to: the files to send, the asked one first. */
class DescriptorIndex {
  private readonly files = new Map<string, DescFile>();
  private readonly symbols = new Map<string, DescFile>();
  private readonly extensions: DescExtension[] = [];

  constructor(services: readonly DescService[], files: readonly DescFile[]) {
    for (const s of services) this.addFile(s.file);
    for (const f of files) this.addFile(f);
  }

  private addFile(file: DescFile): void {
    // By the name clients ask for and imports say ("google/rpc/error_details.proto"); DescFile.name has no ".proto".
    const name = file.proto.name;
    if (this.files.has(name)) return;
    this.files.set(name, file);
    for (const dep of file.dependencies) this.addFile(dep);
    const addMessage = (m: DescMessage) => {
      this.symbols.set(m.typeName, file);
      m.nestedMessages.forEach(addMessage);
      for (const e of m.nestedEnums) this.symbols.set(e.typeName, file);
      for (const x of m.nestedExtensions) this.addExtension(x, file);
    };
    file.messages.forEach(addMessage);
    for (const e of file.enums) this.symbols.set(e.typeName, file);
    for (const x of file.extensions) this.addExtension(x, file);
    for (const s of file.services) {
      this.symbols.set(s.typeName, file);
      for (const m of s.methods) this.symbols.set(`${s.typeName}.${m.name}`, file);
    }
  }

  private addExtension(x: DescExtension, file: DescFile): void {
    this.symbols.set(x.typeName, file);
    this.extensions.push(x);
  }

  bySymbol(symbol: string): DescFile | undefined {
    return this.symbols.get(symbol);
  }

  byName(name: string): DescFile | undefined {
    return this.files.get(name);
  }

  extensionsOf(typeName: string): DescExtension[] {
    return this.extensions.filter((x) => x.extendee.typeName === typeName);
  }

  /** The file's descriptor and those of everything it imports, each once, the file first. */
  static closure(file: DescFile): Uint8Array[] {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const visit = (f: DescFile) => {
      if (seen.has(f.name)) return;
      seen.add(f.name);
      out.push(toBinary(FileDescriptorProtoSchema, f.proto));
      f.dependencies.forEach(visit);
    };
    visit(file);
    return out;
  }
}

type Version = typeof v1 | typeof v1alpha;
type Request = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;

/** The reflection service of one protocol version, describing `served` (and itself). */
function reflectionImpl(version: Version, served: readonly DescService[]): ServiceImpl<typeof v1.ServerReflection> {
  const all = [...served, ...REFLECTION_SERVICES];
  // No service imports the details' file: errors carry its messages packed in google.protobuf.Any.
  const index = new DescriptorIndex(all, [file_google_rpc_error_details]);
  const names = all.map((s) => s.typeName);
  // Plain message shapes: the same for v1 and v1alpha, made into either by create().
  const answer = (req: Request): MessageInitShape<typeof v1.ServerReflectionResponseSchema>["messageResponse"] => {
    const notFound = (what: string) => ({ case: "errorResponse" as const, value: { errorCode: 5, errorMessage: `${what} not found` } });
    const files = (file: DescFile | undefined, what: string) =>
      file ? { case: "fileDescriptorResponse" as const, value: { fileDescriptorProto: DescriptorIndex.closure(file) } } : notFound(what);
    const r = req.messageRequest;
    switch (r.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: names.map((name) => ({ name })) } };
      case "fileContainingSymbol":
        return files(index.bySymbol(r.value), `symbol ${r.value}`);
      case "fileByFilename":
        return files(index.byName(r.value), `file ${r.value}`);
      case "fileContainingExtension": {
        const x = index.extensionsOf(r.value.containingType).find((e) => e.number === r.value.extensionNumber);
        return files(x?.file, `extension ${r.value.extensionNumber} of ${r.value.containingType}`);
      }
      case "allExtensionNumbersOfType":
        return {
          case: "allExtensionNumbersResponse",
          value: { baseTypeName: r.value, extensionNumber: index.extensionsOf(r.value).map((x) => x.number) },
        };
      default:
        return { case: "errorResponse", value: { errorCode: 3, errorMessage: "empty request" } };
    }
  };
  return {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) {
        yield create(version.ServerReflectionResponseSchema as typeof v1.ServerReflectionResponseSchema, {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(req),
        });
      }
    },
  };
}

/** Adds the two reflection services (v1 and v1alpha), describing `served` and themselves. */
export function addReflection(registry: ServiceRegistry, served: readonly DescService[]): void {
  registry.add(v1.ServerReflection, reflectionImpl(v1, served));
  // Same messages, another package: the v1 implementation serves both.
  registry.add(v1alpha.ServerReflection, reflectionImpl(v1alpha, served) as unknown as ServiceImpl<typeof v1alpha.ServerReflection>);
}
