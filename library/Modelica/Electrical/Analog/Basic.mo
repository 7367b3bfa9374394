within Modelica.Electrical.Analog;
package Basic "Basic electrical components"
  import Modelica.Units.SI;

  model Ground "Ground node: p.v = 0"
    Interfaces.Pin p "Ground pin";
  equation
    p.v = 0;
  end Ground;

  model Resistor "Ideal linear electrical resistor: v = R*(1 + alpha*(T - T_ref))*i (no conditional heat port: the device temperature is the parameter T)"
    parameter SI.Resistance R(start = 1) "Resistance at temperature T_ref";
    parameter SI.Temperature T_ref = 300.15 "Reference temperature";
    parameter SI.LinearTemperatureCoefficient alpha = 0 "Temperature coefficient of resistance (R_actual = R*(1 + alpha*(T - T_ref)))";
    parameter SI.Temperature T = T_ref "Fixed device temperature (the MSL's T when useHeatPort = false)";
    extends Interfaces.OnePort;
    SI.Resistance R_actual "Actual resistance = R*(1 + alpha*(T - T_ref))";
    SI.Power LossPower "Loss power leaving component via heat port";
  equation
    R_actual = R*(1 + alpha*(T - T_ref));
    v = R_actual*i;
    LossPower = v*i;
  end Resistor;

  model Capacitor "Ideal linear electrical capacitor: i = C*der(v)"
    extends Interfaces.OnePort(v(start = 0));
    parameter SI.Capacitance C(start = 1) "Capacitance";
  equation
    i = C*der(v);
  end Capacitor;

  model Inductor "Ideal linear electrical inductor: L*der(i) = v"
    extends Interfaces.OnePort(i(start = 0));
    parameter SI.Inductance L(start = 1) "Inductance";
  equation
    L*der(i) = v;
  end Inductor;
end Basic;
