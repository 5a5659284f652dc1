// A stored column's kind, as native/src/block-codec.h numbers it: what the addon writes into a block and
// reads back from one (values of a kind it does not know fail its checks).

export enum FieldKind {
  Single = 0,
  Double = 1,
  Flag = 2,
}
