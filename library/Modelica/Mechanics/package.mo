within Modelica;
package Mechanics "Mechanical components"
end Mechanics;
