within Modelica.Electrical.Analog;
package Basic "Basic electrical components"
  import Modelica.Units.SI;

  model Ground "Ground node: p.v = 0"
    Interfaces.Pin p "Ground pin";
  equation
    p.v = 0;
  end Ground;

  model Resistor "Ideal linear electrical resistor: v = R*(1 + alpha*(T_heatPort - T_ref))*i"
    parameter SI.Resistance R(start = 1) "Resistance at temperature T_ref";
    parameter SI.Temperature T_ref = 300.15 "Reference temperature";
    parameter SI.LinearTemperatureCoefficient alpha = 0 "Temperature coefficient of resistance (R_actual = R*(1 + alpha*(T_heatPort - T_ref)))";
    extends Interfaces.OnePort;
    extends Interfaces.ConditionalHeatPort(T = T_ref);
    SI.Resistance R_actual "Actual resistance = R*(1 + alpha*(T_heatPort - T_ref))";
  equation
    R_actual = R*(1 + alpha*(T_heatPort - T_ref));
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
