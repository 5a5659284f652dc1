// The served services, kept twice over from one registration: as the Connect
// router's handlers (gRPC, gRPC-Web, Connect) and as implementation specs the
// REST transcoder invokes in-process with the same interceptors, so a REST
// call costs no protobuf binary round trip.
import type { DescMessage, DescService } from "@bufbuild/protobuf";
import { createServiceImplSpec, type ConnectRouter, type Interceptor, type MethodImplSpec, type ServiceImpl } from "@connectrpc/connect";
import { checkedJsonDecoder } from "./json-input.js";
import { JsonShaper, type ShapeRule } from "../http/json-shape.js";
import type { RestDocs } from "./rest/openapi.js";
import { maxBodyBytes } from "./rest/rest-routes.js";

export class ServiceRegistry {
  readonly methods: MethodImplSpec[] = [];
  /** Rules the REST JSON of a message type follows beyond proto3 JSON (D52), by message type. */
  private readonly jsonShapes = new Map<DescMessage, ShapeRule>();
  /** The one REST JSON writer, with those rules: the transcoder's answers and Server-Sent Events use it. */
  readonly json = new JsonShaper(this.jsonShapes);
  /** What the OpenAPI document says of a service's routes beyond its descriptors (D41), by service type name. */
  readonly restDocs = new Map<string, RestDocs>();

  constructor(
    readonly router: ConnectRouter,
    /** The router's interceptors, in the same order. */
    readonly interceptors: readonly Interceptor[],
  ) {}

  /** Methods missing from `impl` answer Unimplemented everywhere (501 on REST). */
  add<T extends DescService>(service: T, impl: Partial<ServiceImpl<T>>): this {
    for (const spec of Object.values(createServiceImplSpec(service, impl).methods)) {
      this.router.rpc(spec.method, spec.impl as never, {
        // Each method reads what its REST route accepts (D6), inflated bodies included (D51).
        readMaxBytes: maxBodyBytes(spec.method),
        // Typed without textDecoder, which Connect's JSON serialisation reads all the same.
        jsonOptions: { textDecoder: checkedJsonDecoder(spec.method.input) } as object,
      });
      this.methods.push(spec);
    }
    return this;
  }

  /** Documents a service's REST headers and streamed answers (D41). */
  documentRest(service: DescService, docs: RestDocs): this {
    this.restDocs.set(service.typeName, docs);
    return this;
  }

  /** Adds a REST JSON shape rule for one message type, wherever it appears in an answer. */
  shapeJson(schema: DescMessage, rule: ShapeRule): this {
    this.jsonShapes.set(schema, rule);
    return this;
  }
}
