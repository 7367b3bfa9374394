within Modelica.Electrical;
package Analog "Analog electrical components"
end Analog;
