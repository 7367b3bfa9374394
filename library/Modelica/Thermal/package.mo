within Modelica;
package Thermal "Thermal components"
end Thermal;
