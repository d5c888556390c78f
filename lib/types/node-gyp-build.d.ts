declare module 'node-gyp-build' {
  interface NodeGypBuild {
    (dir: string): unknown;
    /** The file node-gyp-build would load from `dir`; throws "No native build was found ...". */
    path(dir: string): string;
  }
  const load: NodeGypBuild;
  export = load;
}
