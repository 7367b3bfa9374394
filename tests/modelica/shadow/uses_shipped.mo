// Uses a class of the shipped library, which the user's own `Modelica`
// shadows when tests/modelica/shadow is a library directory.
model UsesShipped
  Modelica.Electrical.Analog.Basic.Ground ground;
end UsesShipped;
