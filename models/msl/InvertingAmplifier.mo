// An inverting amplifier with an ideal operational amplifier: the output
// is -R2/R1 times the input signal. A constant current source feeds a
// conductance of the model's own, a component written on the library's
// TwoPin.
model InvertingAmplifier "Inverting amplifier and a current-fed conductance"
  model Conductance "Linear conductance on the library's TwoPin: p.i = G*v"
    extends Modelica.Electrical.Analog.Interfaces.TwoPin;
    parameter Modelica.Units.SI.Conductance G = 1 "conductance";
  equation
    p.i = G*v;
    n.i = -p.i;
  end Conductance;
  Modelica.Blocks.Sources.Sine signal(amplitude = 2, f = 10);
  Modelica.Electrical.Analog.Sources.SignalVoltage input_;
  Modelica.Electrical.Analog.Basic.Resistor R1(R = 1000);
  Modelica.Electrical.Analog.Basic.Resistor R2(R = 3000);
  Modelica.Electrical.Analog.Basic.Resistor load(R = 500);
  Modelica.Electrical.Analog.Ideal.IdealOpAmp3Pin opAmp;
  Modelica.Electrical.Analog.Basic.Ground ground;
  Modelica.Electrical.Analog.Sources.ConstantCurrent currentSource(I = 0.5);
  Conductance conductance(G = 4);
equation
  connect(signal.y, input_.v);
  connect(input_.p, R1.p);
  connect(R1.n, opAmp.in_n);
  connect(opAmp.in_n, R2.p);
  connect(R2.n, opAmp.out);
  connect(opAmp.out, load.p);
  connect(load.n, ground.p);
  connect(opAmp.in_p, ground.p);
  connect(input_.n, ground.p);
  connect(currentSource.n, conductance.p);
  connect(currentSource.p, conductance.n);
  connect(conductance.n, ground.p);
  annotation(experiment(StopTime = 0.2, Interval = 0.005));
end InvertingAmplifier;
