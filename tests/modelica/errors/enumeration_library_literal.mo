// A literal that Modelica.Blocks.Types.Init lacks, and a number where
// the enumeration is expected (E0138).
model LibraryLiteral
  Modelica.Blocks.Sources.Constant one(k = 1);
  Modelica.Blocks.Continuous.Integrator a(initType = Modelica.Blocks.Types.Init.Steady);
  Modelica.Blocks.Continuous.FirstOrder b(initType = 2);
equation
  connect(one.y, a.u);
  connect(one.y, b.u);
end LibraryLiteral;
