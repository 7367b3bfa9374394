within Modelica.Electrical.Analog;
package Ideal "Ideal electrical elements"
  import Modelica.Units.SI;

  model IdealDiode "Ideal diode: a piecewise-linear characteristic on the curve parameter s, blocking (off) for s < 0"
    extends Interfaces.OnePort;
    parameter SI.Resistance Ron(final min = 0) = 1e-5 "Forward state-on differential resistance (closed resistance)";
    parameter SI.Conductance Goff(final min = 0) = 1e-5 "Backward state-off conductance (opened conductance)";
    parameter SI.Voltage Vknee(final min = 0, start = 0) = 0 "Forward threshold voltage";
    extends Interfaces.ConditionalHeatPort;
    Boolean off(start = true) "Switching state";
    Real s(start = 0, final unit = "1") "Auxiliary variable for actual position on the ideal diode characteristic";
  equation
    off = s < 0;
    v = s*(if off then 1 else Ron) + Vknee;
    i = s*(if off then Goff else 1) + Goff*Vknee;
    LossPower = v*i;
  end IdealDiode;

  model IdealOpAmp3Pin "Ideal operational amplifier (norator-nullator pair) with three pins: in_p.v = in_n.v, no input currents"
    Interfaces.PositivePin in_p "Positive pin of the input port";
    Interfaces.NegativePin in_n "Negative pin of the input port";
    Interfaces.PositivePin out "Output pin";
  equation
    in_p.v = in_n.v;
    in_p.i = 0;
    in_n.i = 0;
  end IdealOpAmp3Pin;
end Ideal;
