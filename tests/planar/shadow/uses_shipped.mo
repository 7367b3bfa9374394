// Uses a class of the shipped `PlanarMechanics`, which the user's own
// package shadows when tests/planar/shadow is a library directory.
model UsesShipped
  PlanarMechanics.Parts.Fixed fixed;
end UsesShipped;
