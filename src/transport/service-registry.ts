// The served services, kept twice over from one registration: as the Connect
// router's handlers (gRPC, gRPC-Web, Connect) and as implementation specs the
// REST transcoder invokes in-process with the same interceptors, so a REST
// call costs no protobuf binary round trip.
import type { DescService } from "@bufbuild/protobuf";
import { createServiceImplSpec, type ConnectRouter, type Interceptor, type MethodImplSpec, type ServiceImpl } from "@connectrpc/connect";

export class ServiceRegistry {
  readonly methods: MethodImplSpec[] = [];

  constructor(
    readonly router: ConnectRouter,
    /** The router's interceptors, in the same order. */
    readonly interceptors: readonly Interceptor[],
  ) {}

  /** Methods missing from `impl` answer Unimplemented everywhere (501 on REST). */
  add<T extends DescService>(service: T, impl: Partial<ServiceImpl<T>>): this {
    this.router.service(service, impl);
    this.methods.push(...Object.values(createServiceImplSpec(service, impl).methods));
    return this;
  }
}
